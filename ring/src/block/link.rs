//! The `sockaddr_ll` the kernel writes after each packet's header: where the packet came
//! from or went ([`LinkAddr`]), and the [`Direction`] its `sll_pkttype` names.

use super::layout::hdr3;

/// Where a packet was going, from its `sll_pkttype` (`PACKET_*` in linux/if_packet.h).
///
/// On loopback every packet appears twice, once [`Outgoing`](Direction::Outgoing) and once
/// as received ([`Host`](Direction::Host)); libpcap and tcpdump keep the received copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Direction {
    /// To this host (`PACKET_HOST`).
    #[default]
    Host,
    /// Link-layer broadcast (`PACKET_BROADCAST`).
    Broadcast,
    /// Link-layer multicast (`PACKET_MULTICAST`).
    Multicast,
    /// To another host, seen in promiscuous mode (`PACKET_OTHERHOST`).
    OtherHost,
    /// Sent by this host (`PACKET_OUTGOING`).
    Outgoing,
    /// Another `sll_pkttype` (`PACKET_LOOPBACK`, `PACKET_USER`, `PACKET_KERNEL`, or one this
    /// crate does not name yet).
    Other(u8),
}

impl Direction {
    /// The direction `sll_pkttype` names.
    #[inline]
    pub const fn from_pkttype(pkttype: u8) -> Direction {
        match pkttype {
            0 => Direction::Host,
            1 => Direction::Broadcast,
            2 => Direction::Multicast,
            3 => Direction::OtherHost,
            4 => Direction::Outgoing,
            other => Direction::Other(other),
        }
    }
    /// The `sll_pkttype` value.
    #[inline]
    pub const fn pkttype(self) -> u8 {
        match self {
            Direction::Host => 0,
            Direction::Broadcast => 1,
            Direction::Multicast => 2,
            Direction::OtherHost => 3,
            Direction::Outgoing => 4,
            Direction::Other(v) => v,
        }
    }
    /// Sent by this host.
    #[inline]
    pub const fn is_outgoing(self) -> bool {
        matches!(self, Direction::Outgoing)
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Direction::Host => f.write_str("host"),
            Direction::Broadcast => f.write_str("broadcast"),
            Direction::Multicast => f.write_str("multicast"),
            Direction::OtherHost => f.write_str("otherhost"),
            Direction::Outgoing => f.write_str("outgoing"),
            Direction::Other(v) => write!(f, "pkttype {v}"),
        }
    }
}

/// The packet's `sockaddr_ll` as the kernel filled it after the frame header: where it came
/// from or went, and its link-layer type. What `-i any` captures need (SLL2 headers,
/// directions, interfaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LinkAddr {
    /// Interface index (`sll_ifindex`).
    pub ifindex: u32,
    /// Link-layer protocol (`sll_protocol`, host order: 0x0800 for IPv4).
    pub protocol: u16,
    /// ARPHRD_* type of the interface (`sll_hatype`: 1 Ethernet, 772 loopback, ...).
    pub hatype: u16,
    /// PACKET_HOST (0), BROADCAST (1), MULTICAST (2), OTHERHOST (3), OUTGOING (4).
    pub pkttype: u8,
    /// Bytes of `addr` in use (at most 6: longer addresses are cut).
    pub halen: u8,
    /// Link-layer address (the sender's for incoming packets), a MAC-48 at most: 16 bytes in
    /// all keep [`PacketMeta`](crate::PacketMeta) small.
    pub addr: [u8; 6],
}

impl LinkAddr {
    /// Reads the 20 bytes of a `sockaddr_ll`.
    #[inline]
    pub(crate) fn read(b: &[u8; 20]) -> LinkAddr {
        let mut addr = [0u8; 6];
        addr.copy_from_slice(&b[12..18]);
        LinkAddr {
            protocol: u16::from_be_bytes([b[2], b[3]]),
            ifindex: u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
            hatype: u16::from_ne_bytes([b[8], b[9]]),
            pkttype: b[10],
            halen: b[11].min(6),
            addr,
        }
    }
    /// The packet was sent by this host (PACKET_OUTGOING).
    pub fn outgoing(&self) -> bool {
        self.pkttype == 4
    }
    /// [`LinkAddr::pkttype`] as a [`Direction`].
    pub fn direction(&self) -> Direction {
        Direction::from_pkttype(self.pkttype)
    }
}

/// The `sockaddr_ll` after packet `p`'s header in block `bytes`.
pub(crate) fn link_addr_at(bytes: &[u8], hdr_off: u32) -> LinkAddr {
    let at = hdr_off as usize + hdr3::SIZE;
    // The frame starts after the sockaddr_ll (tp_mac, checked against the block when the
    // packet was read), so a header that leaves no room for one reads as zeros.
    let mac = match bytes.get(hdr_off as usize + hdr3::MAC..hdr_off as usize + hdr3::MAC + 2) {
        Some(m) => usize::from(u16::from_ne_bytes([m[0], m[1]])),
        None => 0,
    };
    match bytes.get(at..at + 20) {
        Some(ll) if mac >= hdr3::SIZE + 20 => LinkAddr::read(ll.try_into().expect("20 bytes")),
        _ => LinkAddr::default(),
    }
}
