//! The map's entries as user space reads them: one direction's entry, its counts summed over
//! the CPUs, a flow's two directions, and the raw key turned into the flow cache's key.

use std::net::{Ipv4Addr, Ipv6Addr};

use zcrx_flowcache::FlowKey;

use crate::program::{
    F_IPV6, F_LATER_FRAGMENT, F_VLAN, KEY_SIZE, K_DST, K_FLAGS, K_PORTS, K_PROTO, K_SRC, K_VLAN,
    VALUE_SIZE,
};

/// One direction's entry as last read: its raw key, the sums over the CPUs, and the packets
/// and bytes of them already reported by the active timeout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DirEntry {
    /// The flow map's shard that holds it.
    pub(crate) shard: usize,
    pub(crate) raw: [u8; KEY_SIZE],
    pub(crate) counts: Counts,
    pub(crate) reported: [u64; 2],
}

impl DirEntry {
    /// Packets since the last report.
    pub(crate) fn new_packets(&self) -> u64 {
        self.counts.packets.saturating_sub(self.reported[0])
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    pub(crate) first: u64,
    pub(crate) last: u64,
    pub(crate) flags: u8,
}

/// A flow as user space knows it: both directions' entries, and when its last
/// active-timeout report was read (monotonic ns; `None`: never reported).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flow {
    pub(crate) dirs: [Option<DirEntry>; 2],
    pub(crate) reported_at: Option<u64>,
}

impl Flow {
    /// Packets since the last report, both ways.
    pub(crate) fn new_packets(&self) -> u64 {
        self.dirs.iter().flatten().map(DirEntry::new_packets).sum()
    }
    /// The first packet since the last report (monotonic ns): exact before the first report
    /// and where a direction has one new packet; else the last report's read, before which
    /// none of the new packets came (the map keeps a first time per entry, not per period).
    pub(crate) fn period_start(&self) -> u64 {
        self.dirs
            .iter()
            .flatten()
            .filter(|d| d.new_packets() > 0)
            .map(|d| match self.reported_at {
                None => d.counts.first,
                Some(_) if d.new_packets() == 1 => d.counts.last,
                Some(at) => at.min(d.counts.last),
            })
            .min()
            .unwrap_or(0)
    }
}

/// Sums one entry's per-CPU values. The program writes `first` only where it creates the
/// entry: the map gives every other CPU a zeroed value, to which that CPU's packets add
/// without a first time. So the entry's first time is the least that is not 0 (the
/// creating CPU's): a slot's 0 means "not created here". Were none written, the least
/// `last` stands in.
pub(crate) fn sum_per_cpu(buf: &[u8]) -> Counts {
    let mut c = Counts::default();
    let mut least_last = u64::MAX;
    for v in buf.chunks_exact(VALUE_SIZE) {
        let w = |i: usize| u64::from_ne_bytes(v[8 * i..8 * i + 8].try_into().expect("8"));
        let (packets, bytes, first, last, flags) = (w(0), w(1), w(2), w(3), w(4));
        if packets == 0 {
            continue;
        }
        if first != 0 && (c.first == 0 || first < c.first) {
            c.first = first;
        }
        least_last = least_last.min(last);
        c.last = c.last.max(last);
        c.packets += packets;
        c.bytes += bytes;
        c.flags |= flags as u8;
    }
    if c.first == 0 && c.packets > 0 {
        c.first = least_last;
    }
    c
}

/// The flow key of a raw map key.
pub(crate) fn key_of(raw: &[u8; KEY_SIZE]) -> FlowKey {
    let at = |o: i16| o as usize;
    let flags = raw[at(K_FLAGS)];
    let proto = raw[at(K_PROTO)];
    let port = |o: usize| u16::from_be_bytes([raw[o], raw[o + 1]]);
    let (sport, dport) = (port(at(K_PORTS)), port(at(K_PORTS) + 2));
    let addr16 = |o: i16| -> [u8; 16] { raw[at(o)..at(o) + 16].try_into().expect("16") };
    let mut key = if flags & F_IPV6 != 0 {
        FlowKey::v6(
            Ipv6Addr::from(addr16(K_SRC)),
            Ipv6Addr::from(addr16(K_DST)),
            proto,
            sport,
            dport,
        )
    } else {
        let a4 = |o: i16| Ipv4Addr::new(raw[at(o)], raw[at(o) + 1], raw[at(o) + 2], raw[at(o) + 3]);
        FlowKey::v4(a4(K_SRC), a4(K_DST), proto, sport, dport)
    };
    if flags & F_LATER_FRAGMENT != 0 {
        key = key.with_later_fragment();
    }
    if flags & F_VLAN != 0 {
        key = key.with_vlan(u16::from_ne_bytes([raw[at(K_VLAN)], raw[at(K_VLAN) + 1]]));
    }
    key
}
