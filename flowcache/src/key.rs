//! The flow key: a compact, fixed-size 5-tuple (plus VLAN), IPv4 and IPv6 alike.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::proto::ipproto;

const F_IPV6: u8 = 1;
const F_LATER_FRAGMENT: u8 = 2;
const F_VLAN: u8 = 4;

/// A flow's identity: addresses, protocol, ports (ICMP: type and code), optional VLAN id.
///
/// 40 bytes, `Copy`, no heap. IPv4 addresses occupy the first 4 bytes of each address field.
/// A non-first IP fragment carries no ports; its key has ports 0 and says so
/// ([`FlowKey::is_later_fragment`]), so it never pretends to belong to a port pair.
#[derive(Clone, Copy, Eq, PartialOrd, Ord, Default)]
pub struct FlowKey {
    // Addresses as two big-endian words: built in registers (no partial stores), compared in
    // byte order. IPv4 sits in the low 32 bits of word 0.
    src: [u64; 2],
    dst: [u64; 2],
    // Everything else in one word, so that hashing and comparing a key are five word
    // operations: sport (bits 0..16), dport (16..32), vlan (32..48), proto (48..56),
    // flags (56..64).
    tail: u64,
}

const SPORT: u32 = 0;
const DPORT: u32 = 16;
const VLAN: u32 = 32;
const PROTO: u32 = 48;
const FLAGS: u32 = 56;

impl std::hash::Hash for FlowKey {
    /// The five words (consistent with `eq`, which compares exactly them).
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        for w in self.words() {
            h.write_u64(w);
        }
    }
}

impl PartialEq for FlowKey {
    /// Five word compares folded into one branch.
    #[inline]
    fn eq(&self, o: &FlowKey) -> bool {
        ((self.src[0] ^ o.src[0])
            | (self.src[1] ^ o.src[1])
            | (self.dst[0] ^ o.dst[0])
            | (self.dst[1] ^ o.dst[1])
            | (self.tail ^ o.tail))
            == 0
    }
}

/// The usual name of an IP protocol number this crate reads ports (or types) from.
pub fn proto_name(proto: u8) -> Option<&'static str> {
    crate::proto::NAMES
        .iter()
        .find(|(n, _)| *n == proto)
        .map(|(_, name)| *name)
}

/// The IP protocol number of a name [`proto_name`] gives ("tcp", "udp", "icmp6", ...), or of
/// a number written out ("47").
pub fn proto_number(name: &str) -> Option<u8> {
    crate::proto::NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(p, _)| *p)
        .or_else(|| name.parse().ok())
}

/// Which way a packet went relative to the canonical key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Direction {
    /// Source is the canonical key's source.
    #[default]
    Forward = 0,
    /// Source is the canonical key's destination.
    Reverse = 1,
}

impl FlowKey {
    /// An IPv4 key.
    pub fn v4(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, sport: u16, dport: u16) -> Self {
        FlowKey::from_words(
            false,
            [u64::from(src.to_bits()), 0],
            [u64::from(dst.to_bits()), 0],
            proto,
            sport,
            dport,
        )
    }
    /// An IPv6 key.
    pub fn v6(src: Ipv6Addr, dst: Ipv6Addr, proto: u8, sport: u16, dport: u16) -> Self {
        let w = |a: Ipv6Addr| {
            let b = a.to_bits();
            [(b >> 64) as u64, b as u64]
        };
        FlowKey::from_words(true, w(src), w(dst), proto, sport, dport)
    }
    #[inline]
    pub(crate) fn from_words(
        v6: bool,
        src: [u64; 2],
        dst: [u64; 2],
        proto: u8,
        sport: u16,
        dport: u16,
    ) -> Self {
        let ports_be = u32::from(sport) << 16 | u32::from(dport);
        FlowKey::from_wire_ports(v6, src, dst, proto, ports_be)
    }
    /// [`FlowKey::from_words`] with the two ports as the transport header holds them: its
    /// first four bytes read as one big-endian word (source port in the high half).
    #[inline(always)]
    pub(crate) fn from_wire_ports(
        v6: bool,
        src: [u64; 2],
        dst: [u64; 2],
        proto: u8,
        ports_be: u32,
    ) -> Self {
        let flags = if v6 { F_IPV6 } else { 0 };
        // sport | dport << 16: the halves swapped, one rotate.
        const _: () = assert!(SPORT == 0 && DPORT == 16);
        let ports = u64::from(ports_be.rotate_left(16));
        FlowKey {
            src,
            dst,
            tail: ports << SPORT | u64::from(proto) << PROTO | u64::from(flags) << FLAGS,
        }
    }
    #[inline]
    fn flags(&self) -> u8 {
        (self.tail >> FLAGS) as u8
    }
    #[inline]
    pub(crate) fn set_later_fragment(&mut self) {
        self.tail |= u64::from(F_LATER_FRAGMENT) << FLAGS;
    }
    /// The same key marked as a non-first fragment's ([`FlowKey::is_later_fragment`]), for
    /// keys built outside the extractor (e.g. from an in-kernel flow map); its ports should be
    /// 0, as a later fragment carries none.
    #[inline]
    pub fn with_later_fragment(mut self) -> Self {
        self.set_later_fragment();
        self
    }
    /// With a VLAN id (12 bits kept).
    #[inline]
    pub fn with_vlan(mut self, vid: u16) -> Self {
        self.tail = (self.tail & !(0xffff << VLAN))
            | u64::from(vid & 0x0fff) << VLAN
            | u64::from(F_VLAN) << FLAGS;
        self
    }

    /// Source address.
    pub fn src(&self) -> IpAddr {
        self.addr(&self.src)
    }
    /// Destination address.
    pub fn dst(&self) -> IpAddr {
        self.addr(&self.dst)
    }
    fn addr(&self, a: &[u64; 2]) -> IpAddr {
        if self.is_ipv6() {
            IpAddr::V6(Ipv6Addr::from_bits(
                u128::from(a[0]) << 64 | u128::from(a[1]),
            ))
        } else {
            IpAddr::V4(Ipv4Addr::from_bits(a[0] as u32))
        }
    }
    /// Source port (ICMP: type).
    pub fn sport(&self) -> u16 {
        (self.tail >> SPORT) as u16
    }
    /// Destination port (ICMP: code).
    pub fn dport(&self) -> u16 {
        (self.tail >> DPORT) as u16
    }
    /// An ICMP or ICMPv6 flow's message type and code (which the key holds where other
    /// protocols hold ports); `None` for other protocols and for a later fragment.
    pub fn icmp_type_code(&self) -> Option<(u8, u8)> {
        (matches!(self.proto(), ipproto::ICMP | ipproto::ICMPV6) && !self.is_later_fragment())
            .then(|| (self.sport() as u8, self.dport() as u8))
    }
    /// IP protocol number (after IPv6 extension headers).
    pub fn proto(&self) -> u8 {
        (self.tail >> PROTO) as u8
    }
    /// VLAN id, if the frame had one.
    pub fn vlan(&self) -> Option<u16> {
        (self.flags() & F_VLAN != 0).then_some((self.tail >> VLAN) as u16)
    }
    /// IPv6 flow.
    pub fn is_ipv6(&self) -> bool {
        self.flags() & F_IPV6 != 0
    }
    /// A non-first fragment: no ports were read.
    pub fn is_later_fragment(&self) -> bool {
        self.flags() & F_LATER_FRAGMENT != 0
    }

    /// The direction-independent key (the smaller (address, port) end first) and the
    /// direction of this key relative to it. Both directions of a flow map to one key.
    #[inline]
    pub fn canonical(&self) -> (FlowKey, Direction) {
        // Word-wise: compiles to three compares, not a call to an array comparison.
        let a = (self.src[0], self.src[1], self.sport());
        let b = (self.dst[0], self.dst[1], self.dport());
        if a <= b {
            (*self, Direction::Forward)
        } else {
            (self.reversed(), Direction::Reverse)
        }
    }
    /// The key of the opposite direction.
    #[inline]
    pub fn reversed(&self) -> FlowKey {
        FlowKey {
            src: self.dst,
            dst: self.src,
            // Swap the two port halves of the tail's low word.
            tail: (self.tail & !0xffff_ffff)
                | (self.tail >> DPORT & 0xffff) << SPORT
                | (self.tail >> SPORT & 0xffff) << DPORT,
        }
    }

    /// Five words for hashing: cheaper to feed a hasher than 40 single bytes.
    #[inline]
    pub(crate) fn words(&self) -> [u64; 5] {
        [
            self.src[0],
            self.src[1],
            self.dst[0],
            self.dst[1],
            self.tail,
        ]
    }
}

impl fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match proto_name(self.proto()) {
            Some(n) => n.to_string(),
            None => format!("proto{}", self.proto()),
        };
        let (s, d) = (self.src(), self.dst());
        if let Some((ty, code)) = self.icmp_type_code() {
            write!(f, "{proto} {s} > {d} type {ty} code {code}")?;
        } else {
            let end = |a: IpAddr, p: u16| match a {
                IpAddr::V4(a) => format!("{a}:{p}"),
                IpAddr::V6(a) => format!("[{a}]:{p}"),
            };
            write!(
                f,
                "{proto} {} > {}",
                end(s, self.sport()),
                end(d, self.dport())
            )?;
        }
        if let Some(v) = self.vlan() {
            write!(f, " vlan {v}")?;
        }
        if self.is_later_fragment() {
            write!(f, " frag")?;
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for FlowKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("FlowKey", 7)?;
        st.serialize_field("src", &self.src())?;
        st.serialize_field("dst", &self.dst())?;
        st.serialize_field("proto", &self.proto())?;
        st.serialize_field("sport", &self.sport())?;
        st.serialize_field("dport", &self.dport())?;
        st.serialize_field("vlan", &self.vlan())?;
        st.serialize_field("later_fragment", &self.is_later_fragment())?;
        st.end()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn size_and_canonical() {
        assert_eq!(std::mem::size_of::<FlowKey>(), 40);
        let a = FlowKey::v4(
            Ipv4Addr::new(198, 18, 0, 2),
            Ipv4Addr::new(198, 18, 0, 1),
            17,
            53,
            4000,
        );
        let (c, d) = a.canonical();
        assert_eq!(d, Direction::Reverse);
        assert_eq!(a.reversed().canonical(), (c, Direction::Forward));
        assert_eq!(c.src(), IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)));
        assert_eq!(format!("{a}"), "udp 198.18.0.2:53 > 198.18.0.1:4000");
        let ping = FlowKey::v4(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            ipproto::ICMP,
            8,
            0,
        );
        assert_eq!(ping.icmp_type_code(), Some((8, 0)));
        assert_eq!(
            format!("{ping}"),
            "icmp 198.18.0.1 > 198.18.0.2 type 8 code 0"
        );
        let ns = FlowKey::v6(
            Ipv6Addr::LOCALHOST,
            Ipv6Addr::LOCALHOST,
            ipproto::ICMPV6,
            135,
            0,
        );
        assert_eq!(format!("{ns}"), "icmp6 ::1 > ::1 type 135 code 0");
        assert_eq!(a.icmp_type_code(), None);
        assert_eq!(proto_number("UDP"), Some(17));
        assert_eq!(proto_number("icmp6"), Some(58));
        assert_eq!(proto_number("47"), Some(47));
        assert_eq!(proto_number("ipx"), None);
        // Same address both ends: the ports decide.
        let s = FlowKey::v4(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 6, 9, 8);
        assert_eq!(s.canonical().1, Direction::Reverse);
        assert_eq!(s.reversed().canonical().0, s.canonical().0);
    }
}
