//! Ethernet II (IEEE 802.3 §3.2) and the 802.1Q / 802.1ad tags that may follow its source
//! address.

use super::base::{be16, need, view, WireError};

/// EtherType values (IEEE registry; `linux/if_ether.h`).
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// Reverse ARP.
    pub const RARP: u16 = 0x8035;
    /// IPv6.
    pub const IPV6: u16 = 0x86dd;
    /// 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag (QinQ).
    pub const QINQ: u16 = 0x88a8;
    /// Pre-standard QinQ tag.
    pub const QINQ_9100: u16 = 0x9100;
    /// MPLS unicast.
    pub const MPLS_UNICAST: u16 = 0x8847;
    /// MPLS multicast.
    pub const MPLS_MULTICAST: u16 = 0x8848;
    /// LLDP.
    pub const LLDP: u16 = 0x88cc;

    /// Whether `t` announces a VLAN tag (802.1Q, 802.1ad or the pre-standard 0x9100).
    #[inline(always)]
    pub const fn is_vlan(t: u16) -> bool {
        matches!(t, VLAN | QINQ | QINQ_9100)
    }
}

/// Byte offsets of the Ethernet header's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Destination address.
    pub const DESTINATION: Field = 0..6;
    /// Source address.
    pub const SOURCE: Field = 6..12;
    /// EtherType (or the first tag's TPID).
    pub const ETHERTYPE: Field = 12..14;
    /// The header's length without tags.
    pub const HEADER_LEN: usize = 14;
}

/// An Ethernet II header and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

view!(EthernetFrame);

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Checks that the buffer holds the 14-byte header.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), field::HEADER_LEN)
    }

    /// The destination MAC address.
    #[inline(always)]
    pub fn dst_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        a
    }

    /// The source MAC address.
    #[inline(always)]
    pub fn src_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        a
    }

    /// The EtherType (a VLAN TPID when tags follow; see [`ethertype::is_vlan`]).
    #[inline(always)]
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE.start)
    }

    /// The bytes after the 14-byte header (the first tag, or the network layer).
    #[inline(always)]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::HEADER_LEN..]
    }
}

/// Byte offsets of a VLAN tag's fields, counted from the tag's TCI (the TPID before it is
/// the EtherType field of what precedes it).
pub(crate) mod tag_field {
    use crate::wire::base::Field;
    /// Tag control information: priority (3 bits), drop eligible (1), VLAN id (12).
    pub const TCI: Field = 0..2;
    /// The EtherType after the tag.
    pub const ETHERTYPE: Field = 2..4;
    /// The tag's length.
    pub const LEN: usize = 4;
}

/// An 802.1Q / 802.1ad tag after its TPID: the TCI and the next EtherType (IEEE 802.1Q §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag<T: AsRef<[u8]>> {
    buffer: T,
}

view!(VlanTag);

impl<T: AsRef<[u8]>> VlanTag<T> {
    /// Checks that the buffer holds the 4 bytes of the tag.
    #[inline(always)]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), tag_field::LEN)
    }

    /// The tag control information.
    #[inline(always)]
    pub fn tci(&self) -> u16 {
        be16(self.buffer.as_ref(), tag_field::TCI.start)
    }

    /// The VLAN id (the TCI's low 12 bits).
    #[inline(always)]
    pub fn vlan_id(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// The priority code point.
    #[inline(always)]
    pub fn priority(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// The drop eligible indicator.
    #[inline(always)]
    pub fn drop_eligible(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// The EtherType after the tag.
    #[inline(always)]
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), tag_field::ETHERTYPE.start)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static TAGGED: [u8; 22] = [
        0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x81, 0x00, 0xb0, 0x64, 0x08, 0x00, 0x45, 0, 0,
        20,
    ];

    #[test]
    fn deconstruct() {
        let eth = EthernetFrame::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(eth.dst_addr(), [2, 0, 0, 0, 0, 2]);
        assert_eq!(eth.src_addr(), [2, 0, 0, 0, 0, 1]);
        assert!(ethertype::is_vlan(eth.ethertype()));
        let tag = VlanTag::new_checked(eth.payload()).unwrap();
        assert_eq!(tag.vlan_id(), 100);
        assert_eq!(tag.priority(), 5);
        assert!(tag.drop_eligible());
        assert_eq!(tag.ethertype(), ethertype::IPV4);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            EthernetFrame::new_checked(&TAGGED[..13]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            VlanTag::new_checked(&TAGGED[14..17]),
            Err(WireError::Truncated)
        );
    }

    #[test]
    fn overlong() {
        let eth = EthernetFrame::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(eth.payload().len(), TAGGED.len() - 14);
    }
}
