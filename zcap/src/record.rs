//! One packet on its way to a sink (`Record`) and how a cooked (`-i any`) packet is
//! written: the vocabulary the sinks, the merge and the rotation share, below all of them
//! (it uses only `interface`, for an interface's name).

use std::io::Write;

use zcrx_capture::pcapfile::{SaveError, SaveFile};
use zcrx_ring::LinkAddr;

/// One packet for the sink.
pub(crate) struct Record<'a> {
    pub(crate) ts_ns: u64,
    pub(crate) wire_len: u32,
    pub(crate) data: &'a [u8],
    /// A VLAN tag the kernel stripped: (TCI, TPID), put back in files.
    pub(crate) vlan: Option<(u16, u16)>,
    /// `-i any`: the packet is cooked (from the network layer on) and this is its link
    /// layer; it is written and printed as LINUX_SLL2.
    pub(crate) ll: Option<LinkAddr>,
}

/// `ARPHRD_LOOPBACK`.
pub(crate) const ARPHRD_LOOPBACK: u16 = 772;

/// The 20-byte LINUX_SLL2 header of a cooked packet.
pub(crate) fn sll2_header(ll: &LinkAddr) -> [u8; 20] {
    let mut h = [0u8; 20];
    h[0..2].copy_from_slice(&ll.protocol.to_be_bytes());
    h[4..8].copy_from_slice(&ll.ifindex.to_be_bytes());
    h[8..10].copy_from_slice(&ll.hatype.to_be_bytes());
    h[10] = ll.pkttype;
    h[11] = ll.halen;
    h[12..18].copy_from_slice(&ll.addr);
    h
}

/// pcapng `epb_flags` of a cooked packet: direction (bits 0-1: 1 inbound, 2 outbound) and
/// reception type (bits 2-4: 1 unicast, 2 multicast, 3 broadcast, 4 promiscuous).
fn epb_flags(ll: &LinkAddr) -> u32 {
    match ll.pkttype {
        0 => 1 | (1 << 2),
        1 => 1 | (3 << 2),
        2 => 1 | (2 << 2),
        3 => 1 | (4 << 2),
        4 => 2,
        _ => 0,
    }
}

/// Writes a cooked packet: pcap as LINUX_SLL2; pcapng on the interface's own IDB (added the
/// first time the interface is seen in this file; `ids` maps interface index to IDB id).
pub(crate) fn write_cooked<W: Write>(
    save: &mut SaveFile<W>,
    ids: &mut Vec<(u32, u32)>,
    rec: &Record<'_>,
    ll: &LinkAddr,
) -> Result<(), SaveError> {
    let id = match ids.iter().find(|(i, _)| *i == ll.ifindex) {
        Some(&(_, id)) => id,
        None => {
            let name = crate::interface::interface_name(ll.ifindex);
            let id = save.add_interface(&name, crate::interface::LINKTYPE_LINUX_SLL2, 0)?;
            ids.push((ll.ifindex, id));
            id
        }
    };
    let hdr = sll2_header(ll);
    save.write_cooked(rec.ts_ns, rec.wire_len, &hdr, rec.data, id, epb_flags(ll))
}
