//! Test and generator traffic: Ethernet / (802.1Q) / IPv4 / UDP frames with a sequence number
//! in the payload, so a receiver can check each frame arrived once and unchanged.

use std::net::Ipv4Addr;

pub use crate::synthetic::mac_offset;

/// A MAC that is nobody's: frames to it reach a promiscuous ring and are then dropped by the
/// receiving IP stack as PACKET_OTHERHOST, so the receiver never answers (no ICMP).
pub const OTHER_MAC: [u8; 6] = [0x02, 0x5a, 0x43, 0x52, 0x58, 0x99];
/// Source port of flow 0 of lab traffic; flow `i` sends from `SPORT_BASE + i`.
pub const SPORT_BASE: u16 = 20_000;
/// Destination port of flow 0 of lab traffic (rxbench binds one socket per flow from here).
pub const DPORT_BASE: u16 = 10_000;

/// One UDP flow's addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpFlow {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source address.
    pub src_ip: Ipv4Addr,
    /// Destination address.
    pub dst_ip: Ipv4Addr,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// 802.1Q tag to insert (TCI), if any.
    pub vlan: Option<u16>,
}

/// Bytes of Ethernet + IPv4 + UDP headers (no VLAN).
pub const UDP_HEADERS: usize = 14 + 20 + 8;
/// Magic at the start of every generated payload.
pub const PAYLOAD_MAGIC: u32 = 0x7a63_7278; // "zcrx"

impl UdpFlow {
    /// Flow `i` of lab traffic from side `a` to side `b`: `SPORT_BASE + i` to `dport`, sent
    /// to `b`'s MAC (its IP stack receives it) or, with `to_stack == false`, to [`OTHER_MAC`]
    /// (only a promiscuous ring sees it).
    pub fn lab(
        a: &crate::lab::Side,
        b: &crate::lab::Side,
        i: u16,
        dport: u16,
        to_stack: bool,
    ) -> UdpFlow {
        UdpFlow {
            src_mac: a.mac,
            dst_mac: if to_stack { b.mac } else { OTHER_MAC },
            src_ip: a.ip,
            dst_ip: b.ip,
            sport: SPORT_BASE + i,
            dport,
            vlan: None,
        }
    }

    /// Flow number `i` of a synthetic set: 198.18.0.1:(20000+i) -> 198.18.(1+i/256).(i%256):(10000+i),
    /// fixed locally administered MACs, no VLAN.
    pub fn synthetic(i: u16) -> UdpFlow {
        UdpFlow {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_ip: Ipv4Addr::new(198, 18, 0, 1),
            dst_ip: Ipv4Addr::new(198, 18, 1 + (i >> 8) as u8, i as u8),
            sport: 20_000u16.wrapping_add(i),
            dport: 10_000u16.wrapping_add(i),
            vlan: None,
        }
    }

    /// The same flow in the other direction (addresses, ports and MACs swapped).
    pub fn reversed(&self) -> UdpFlow {
        UdpFlow {
            src_mac: self.dst_mac,
            dst_mac: self.src_mac,
            src_ip: self.dst_ip,
            dst_ip: self.src_ip,
            sport: self.dport,
            dport: self.sport,
            vlan: self.vlan,
        }
    }

    /// A frame of exactly `frame_len` bytes (at least 60 on the wire, padded like a NIC
    /// would) carrying `seq` in its payload: magic(4) | seq(8) | flow hint(4) | pattern.
    pub fn frame(&self, seq: u64, frame_len: usize) -> Vec<u8> {
        let vlan_len = if self.vlan.is_some() { 4 } else { 0 };
        let min = UDP_HEADERS + vlan_len + 16;
        let frame_len = frame_len.max(min).max(60);
        let mut f = Vec::with_capacity(frame_len);
        f.extend_from_slice(&self.dst_mac);
        f.extend_from_slice(&self.src_mac);
        if let Some(tci) = self.vlan {
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
        }
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        let ip_len = (frame_len - 14 - vlan_len) as u16;
        let ip_start = f.len();
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&ip_len.to_be_bytes());
        f.extend_from_slice(&(seq as u16).to_be_bytes()); // id
        f.extend_from_slice(&0x4000u16.to_be_bytes()); // DF
        f.extend_from_slice(&[64, 17, 0, 0]); // ttl, UDP, checksum (filled below)
        f.extend_from_slice(&self.src_ip.octets());
        f.extend_from_slice(&self.dst_ip.octets());
        let csum = ipv4_checksum(&f[ip_start..ip_start + 20]);
        f[ip_start + 10..ip_start + 12].copy_from_slice(&csum.to_be_bytes());
        f.extend_from_slice(&self.sport.to_be_bytes());
        f.extend_from_slice(&self.dport.to_be_bytes());
        f.extend_from_slice(&(ip_len - 20).to_be_bytes());
        f.extend_from_slice(&[0, 0]); // UDP checksum 0: "not computed" (RFC 768)
        f.extend_from_slice(&PAYLOAD_MAGIC.to_be_bytes());
        f.extend_from_slice(&seq.to_be_bytes());
        f.extend_from_slice(&u32::from(self.dport ^ self.sport).to_be_bytes());
        let mut x = seq as u8;
        while f.len() < frame_len {
            f.push(x);
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        f
    }
}

/// A replaying synthetic ring of `blocks` full blocks of `block_size` bytes holding
/// `frame_len`-byte frames of `flows` in turn (the working set of a busy ring, for benchmarks).
pub fn replay_ring(
    flows: &[UdpFlow],
    frame_len: usize,
    block_size: usize,
    blocks: usize,
) -> Result<crate::SyntheticRing, crate::RingError> {
    let per_block = (block_size - 48) / (mac_offset(14) + frame_len).next_multiple_of(8);
    let frames = (0..per_block * blocks)
        .map(|s| crate::Frame::new(flows[s % flows.len()].frame(s as u64, frame_len)));
    crate::SyntheticRing::builder()
        .block_size(block_size)
        .replay(true)
        .build(frames)
}

/// Reads back the sequence number of a frame made by [`UdpFlow::frame`] (VLAN tag present
/// or stripped), or `None` if it is not one of ours.
pub fn frame_seq(frame: &[u8]) -> Option<u64> {
    let mut off = 12;
    if frame.get(12..14)? == [0x81, 0x00] {
        off += 4;
    }
    if frame.get(off..off + 2)? != [0x08, 0x00] {
        return None;
    }
    let ihl = usize::from(frame.get(off + 2)? & 0x0f) * 4;
    let payload = off + 2 + ihl + 8;
    if frame.get(payload..payload + 4)? != PAYLOAD_MAGIC.to_be_bytes() {
        return None;
    }
    Some(u64::from_be_bytes(
        frame.get(payload + 4..payload + 12)?.try_into().ok()?,
    ))
}

/// The IPv4 header checksum (RFC 791, RFC 1071).
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod test {
    use super::*;

    fn flow(vlan: Option<u16>) -> UdpFlow {
        UdpFlow {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_ip: Ipv4Addr::new(198, 18, 0, 1),
            dst_ip: Ipv4Addr::new(198, 18, 0, 2),
            sport: 1000,
            dport: 9001,
            vlan,
        }
    }

    #[test]
    fn frame_round_trips_seq_and_length() {
        for vlan in [None, Some(7)] {
            for len in [0, 60, 64, 1514] {
                let f = flow(vlan).frame(0xdead_beef_0102, len);
                let min = UDP_HEADERS + if vlan.is_some() { 4 } else { 0 } + 16;
                assert_eq!(f.len(), len.max(60).max(min));
                assert_eq!(frame_seq(&f), Some(0xdead_beef_0102));
                let ip = if vlan.is_some() { 18 } else { 14 };
                assert_eq!(ipv4_checksum(&f[ip..ip + 20]), 0, "checksum verifies to 0");
            }
        }
        assert_eq!(frame_seq(&[0u8; 60]), None);
    }
}
