//! Where a flow may live: its key's keyed hash, the two candidate sets and the tag that
//! hash names, and the search of both sets.

use std::hash::{BuildHasher, Hasher};

use super::flow_table::FlowTable;
use super::tags::{self, WAYS};
use crate::key::FlowKey;

impl FlowTable {
    #[inline]
    pub(super) fn hash(&self, key: &FlowKey) -> u64 {
        // The ports/protocol/VLAN word first: foldhash folds words in pairs and finishes
        // an odd last word with one multiply by a constant, which leaves keys that differ
        // only in that word clustered in the low bits (the set index); first, it is folded
        // with an address and mixed by every multiply after.
        let [s0, s1, d0, d1, tail] = key.words();
        let mut h = self.hasher.build_hasher();
        if key.is_ipv6() {
            for w in [tail, s0, s1, d0, d1] {
                h.write_u64(w);
            }
        } else {
            // An IPv4 key's addresses are 32 bits each (the low half of their first words,
            // the second words zero): both in one word, the key is two words and a third,
            // zero, for foldhash to finish with a second multiply (one alone spreads
            // addresses counting up badly: a set got 70 of 65 536 keys, share 16): two
            // folded multiplies instead of three. The branch follows the extraction's own
            // on the EtherType, which predicts it.
            for w in [tail, s0 << 32 | d0, 0] {
                h.write_u64(w);
            }
        }
        h.finish()
    }

    /// The two candidate sets and the tag of a hash.
    #[inline]
    pub(super) fn place(&self, h: u64) -> (usize, usize, u8) {
        let a = (h as usize) & self.set_mask;
        let b = ((h >> 24) as usize) & self.set_mask;
        (a, b, 0x80 | (h >> 57) as u8)
    }

    /// Slot `i`'s tag.
    #[inline]
    pub(super) fn tag(&self, i: usize) -> u8 {
        self.tags[i / WAYS][i % WAYS]
    }

    #[inline(always)]
    pub(super) fn find_in(&self, set: usize, tag: u8, key: &FlowKey) -> Option<usize> {
        let mut m = tags::matching(&self.tags[set], tag);
        while m != 0 {
            let i = set * WAYS + tags::way(m);
            if self.slots[i].key == *key {
                return Some(i);
            }
            m &= m - 1;
        }
        None
    }

    /// The slot holding `key`: its first set, then its second (if a == b, the second search
    /// repeats the first and finds nothing either).
    #[inline(always)]
    pub(super) fn find(&self, h: u64, key: &FlowKey) -> Option<usize> {
        let (a, b, tag) = self.place(h);
        self.find_in(a, tag, key)
            .or_else(|| self.find_in(b, tag, key))
    }
}
