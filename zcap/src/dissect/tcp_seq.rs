//! The conversations whose first sequence numbers TCP's relative numbers subtract (tcpdump's
//! `tcp_seq_hash`), bounded.
//!
//! tcpdump keeps every conversation it has seen for the life of the process; zcap keeps at most
//! [`Seqs::CAPACITY`] and, when full, forgets the conversation it learned first. A forgotten
//! conversation's next segment with ACK is learned again and printed with absolute numbers, as
//! tcpdump prints the first one it sees. Nothing here depends on the order of packets: an entry
//! is a lookup table row, replaced by a SYN, learned from any segment with ACK.

use std::collections::{HashMap, VecDeque};

/// A conversation in one collating order (the lower port first, or the lower address when
/// the ports are equal), as tcpdump collates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConvKey {
    v6: bool,
    src: [u8; 16],
    dst: [u8; 16],
    ports: u32,
}

/// The first numbers of a conversation: `seq` of its collated source, `ack` of its collated
/// destination (each as the first ACK-bearing segment gave them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base {
    /// What the collated source's sequence numbers are relative to.
    pub seq: u32,
    /// What the collated destination's sequence numbers are relative to.
    pub ack: u32,
}

/// The bounded table of conversations.
#[derive(Debug, Default)]
pub struct Seqs {
    /// Keyed by what the wire says: a seeded hash (foldhash's, per process), as fast as an
    /// unseeded one and not one a sender can aim collisions at.
    map: HashMap<ConvKey, Base, foldhash::fast::RandomState>,
    order: VecDeque<ConvKey>,
}

/// What a lookup says about a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relative {
    /// The numbers to print for the segment's seq and ack.
    pub seq: u32,
    /// See `seq`.
    pub ack: u32,
    /// Whether the segment runs against the collating order.
    pub rev: bool,
    /// The conversation's bases after the segment (for SACK blocks).
    pub base: Base,
}

impl Seqs {
    /// Conversations held at most: [`Seqs::MAX_BYTES`] of heap, about 9 MiB.
    pub const CAPACITY: usize = 65_536;
    /// Heap bytes the table takes at most: the map's buckets (a power of two at hashbrown's
    /// 7/8 load, each a key, a base and a control byte) and the order queue's keys.
    pub const MAX_BYTES: usize = (Self::CAPACITY * 8 / 7).next_power_of_two()
        * (size_of::<ConvKey>() + size_of::<Base>() + 1)
        + Self::CAPACITY * size_of::<ConvKey>();

    /// Conversations held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The key of a segment from `src`:`sport` to `dst`:`dport` (addresses of 4 or 16
    /// bytes), and whether the segment runs against the collating order.
    pub fn key(src: &[u8], dst: &[u8], sport: u16, dport: u16) -> (ConvKey, bool) {
        let rev = sport > dport || (sport == dport && src > dst);
        let pad = |a: &[u8]| {
            let mut b = [0u8; 16];
            let n = a.len().min(16);
            b[..n].copy_from_slice(&a[..n]);
            b
        };
        let key = if rev {
            ConvKey {
                v6: src.len() == 16,
                src: pad(dst),
                dst: pad(src),
                ports: u32::from(dport) << 16 | u32::from(sport),
            }
        } else {
            ConvKey {
                v6: src.len() == 16,
                src: pad(src),
                dst: pad(dst),
                ports: u32::from(sport) << 16 | u32::from(dport),
            }
        };
        (key, rev)
    }

    /// tcpdump's rule for a segment with ACK: a SYN or an unknown conversation records the
    /// segment's numbers as the bases and prints them as they are; a known one prints them
    /// less its bases.
    pub fn relative(&mut self, key: ConvKey, rev: bool, syn: bool, seq: u32, ack: u32) -> Relative {
        let learned = if rev {
            Base {
                ack: seq,
                seq: ack.wrapping_sub(1),
            }
        } else {
            Base {
                seq,
                ack: ack.wrapping_sub(1),
            }
        };
        match self.map.get_mut(&key) {
            Some(b) if !syn => {
                let (s, a) = if rev { (b.ack, b.seq) } else { (b.seq, b.ack) };
                Relative {
                    seq: seq.wrapping_sub(s),
                    ack: ack.wrapping_sub(a),
                    rev,
                    base: *b,
                }
            }
            Some(b) => {
                *b = learned;
                Relative {
                    seq,
                    ack,
                    rev,
                    base: learned,
                }
            }
            None => {
                self.insert(key, learned);
                Relative {
                    seq,
                    ack,
                    rev,
                    base: learned,
                }
            }
        }
    }

    fn insert(&mut self, key: ConvKey, base: Base) {
        if self.map.len() >= Self::CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
        self.map.insert(key, base);
        self.order.push_back(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_share_one_entry_and_subtract_their_own_base() {
        let mut s = Seqs::default();
        let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        // SYN-ACK from the server (port 80 > 40000: reversed), then the client's ACK.
        let (k, rev) = Seqs::key(&b, &a, 80, 40000);
        assert!(!rev);
        let r = s.relative(k, rev, true, 5000, 1001);
        assert_eq!((r.seq, r.ack), (5000, 1001));
        let (k2, rev2) = Seqs::key(&a, &b, 40000, 80);
        assert_eq!(k, k2);
        assert!(rev2);
        let r = s.relative(k2, rev2, false, 1001, 5001);
        assert_eq!((r.seq, r.ack), (1, 1));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn the_table_never_holds_more_than_its_capacity() {
        let mut s = Seqs::default();
        for i in 0..Seqs::CAPACITY as u32 + 10 {
            let (k, rev) = Seqs::key(&i.to_be_bytes(), &[1, 1, 1, 1], 1, 2);
            s.relative(k, rev, false, i, i);
        }
        assert_eq!(s.len(), Seqs::CAPACITY);
        assert_eq!(s.order.len(), Seqs::CAPACITY);
        // The first learned are the ones forgotten.
        let (k0, _) = Seqs::key(&0u32.to_be_bytes(), &[1, 1, 1, 1], 1, 2);
        assert!(!s.map.contains_key(&k0));
        const { assert!(Seqs::MAX_BYTES < 10 << 20) };
    }
}
