//! ARP (RFC 826) for Ethernet hardware addresses and IPv4 protocol addresses, the only
//! shape zcap prints.

use std::net::Ipv4Addr;

use super::base::{be16, be32, need, view, WireError};

/// Byte offsets of an Ethernet/IPv4 ARP packet's fields.
pub(crate) mod field {
    use crate::wire::base::Field;
    /// Hardware type (1: Ethernet).
    pub const HTYPE: Field = 0..2;
    /// Protocol type (an EtherType; 0x0800: IPv4).
    pub const PTYPE: Field = 2..4;
    /// Hardware address length.
    pub const HLEN: usize = 4;
    /// Protocol address length.
    pub const PLEN: usize = 5;
    /// Operation (1: request, 2: reply).
    pub const OPER: Field = 6..8;
    /// Sender hardware address.
    pub const SHA: Field = 8..14;
    /// Sender protocol address.
    pub const SPA: Field = 14..18;
    /// Target hardware address.
    pub const THA: Field = 18..24;
    /// Target protocol address.
    pub const TPA: Field = 24..28;
    /// The packet's length for Ethernet and IPv4 addresses.
    pub const LEN: usize = 28;
}

/// An ARP packet with Ethernet and IPv4 addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

view!(ArpPacket);

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// Checks that the buffer holds the 28 bytes of an Ethernet/IPv4 ARP packet (not that
    /// its types say so: see [`Self::is_ethernet_ipv4`]).
    #[inline]
    pub fn check_len(&self) -> Result<(), WireError> {
        need(self.buffer.as_ref(), field::LEN)
    }

    /// Whether the types and lengths are Ethernet's and IPv4's (1, 0x0800, 6, 4).
    #[inline]
    pub fn is_ethernet_ipv4(&self) -> bool {
        let b = self.buffer.as_ref();
        self.hardware_type() == 1
            && self.protocol_type() == super::ethernet::ethertype::IPV4
            && b[field::HLEN] == 6
            && b[field::PLEN] == 4
    }

    /// The hardware type.
    #[inline]
    pub fn hardware_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field::HTYPE.start)
    }

    /// The protocol type.
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PTYPE.start)
    }

    /// The operation.
    #[inline]
    pub fn operation(&self) -> u16 {
        be16(self.buffer.as_ref(), field::OPER.start)
    }

    /// The sender's hardware address.
    #[inline]
    pub fn sender_hardware_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SHA]);
        a
    }

    /// The sender's protocol address.
    #[inline]
    pub fn sender_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buffer.as_ref(), field::SPA.start))
    }

    /// The target's hardware address.
    #[inline]
    pub fn target_hardware_addr(&self) -> [u8; 6] {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::THA]);
        a
    }

    /// The target's protocol address.
    #[inline]
    pub fn target_protocol_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(be32(self.buffer.as_ref(), field::TPA.start))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static REQUEST: [u8; 28] = [
        0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 198, 18, 0, 1, 0, 0, 0, 0, 0, 0, 198, 18, 0, 2,
    ];

    #[test]
    fn deconstruct() {
        let a = ArpPacket::new_checked(&REQUEST[..]).unwrap();
        assert!(a.is_ethernet_ipv4());
        assert_eq!(a.operation(), 1);
        assert_eq!(a.sender_hardware_addr(), [2, 0, 0, 0, 0, 1]);
        assert_eq!(a.sender_protocol_addr(), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(a.target_hardware_addr(), [0; 6]);
        assert_eq!(a.target_protocol_addr(), Ipv4Addr::new(198, 18, 0, 2));
    }

    #[test]
    fn truncated_and_other_types() {
        assert_eq!(
            ArpPacket::new_checked(&REQUEST[..27]),
            Err(WireError::Truncated)
        );
        let mut tr = REQUEST;
        tr[1] = 6; // IEEE 802 hardware
        assert!(!ArpPacket::new_checked(&tr[..]).unwrap().is_ethernet_ipv4());
    }
}
