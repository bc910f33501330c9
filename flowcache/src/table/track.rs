//! The path of a packet: [`FlowTable::track`] and [`FlowTable::track_batch`] account each
//! packet to its flow, inserting a new flow (and evicting one when both its sets are full).

use super::evicted::evict;
use super::fetch;
use super::flow_table::FlowTable;
use super::slot::{Slot, NONE_SINCE};
use super::tags::{self, WAYS};
use crate::key::{Direction, FlowKey};
use crate::record::{TrackInput, Tracked};

/// A new flow goes to its first set while that has at least this many free ways, else to the
/// emptier of its two (module docs). 6 of 16 fills the table as far before its first eviction
/// as always choosing the emptier set does; fewer free ways evict earlier, and first fit (1)
/// evicts from about half full.
const SPILL_FREE: u32 = 6;

/// What `track` learnt of one packet, for its flow's slot: its direction, its key's hash
/// and what the caller passed.
#[derive(Clone, Copy)]
struct Seen {
    dir: Direction,
    hash: u64,
    len: u32,
    ts_ns: u64,
    tcp_flags: u8,
}

/// Tables up to this many slots (384 KiB) take [`FlowTable::track_batch`]'s direct path: such
/// a table stays in the caches, so the fetching passes only add work, while on larger tables
/// they overlap the cache misses (`flowcache/benches` compares both on both sizes).
const CACHED_SLOTS: usize = 4096;

/// Packets [`FlowTable::track_batch`] fetches ahead together on a table beyond the caches.
const GROUP: usize = 16;

impl FlowTable {
    /// Accounts one packet (`input.len` bytes at `input.ts_ns` with `input.tcp_flags`) to its
    /// flow, creating the flow (and evicting the least recently seen of its candidates if
    /// both sets are full). [`Extracted::track_input`](crate::Extracted::track_input) makes
    /// the input from what extraction found.
    #[inline(always)]
    pub fn track(&mut self, input: TrackInput) -> Tracked {
        let TrackInput {
            key,
            len,
            ts_ns,
            tcp_flags,
        } = input;
        let (key, dir) = if self.symmetric {
            key.canonical()
        } else {
            (key, Direction::Forward)
        };
        let h = self.hash(&key);
        self.track_hashed(
            key,
            Seen {
                dir,
                hash: h,
                len,
                ts_ns,
                tcp_flags,
            },
        )
    }

    /// [`FlowTable::track`] for many packets, in order, calling `each(index, tracked)` for every
    /// one. Same results as calling `track` in a loop; faster on tables larger than the caches:
    /// for each group of 16 packets it first hashes them all and prefetches their first sets'
    /// tags, then matches the tags and prefetches the slots they point at, and only then
    /// tracks them, so the group's cache misses overlap instead of following one another.
    /// A table of at most 4096 slots (under half a MiB) is tracked packet by
    /// packet: it stays in the caches, and the passes would only cost.
    ///
    /// `packets` may be a slice (`&[TrackInput]`) or any iterator of inputs: an iterator that
    /// extracts each packet as it goes (`frames.iter().map(|f| ...)`) keeps the inputs in
    /// 16-packet groups on the stack, so the batch costs no array of inputs to write and read
    /// back, and is never slower than `track` called in the same loop.
    #[inline(always)]
    pub fn track_batch<I>(&mut self, packets: I, mut each: impl FnMut(usize, Tracked))
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<TrackInput>,
    {
        use std::borrow::Borrow;
        // One loop, and in it the only call of the iterator's `next`: an iterator that
        // extracts each packet (a large function) is then inlined into the caller's loop
        // as in a loop of `track` calls, where two calls (one for each path) would leave it
        // out of line, a call a packet with the caller's values spilled around it. Its one
        // counter serves both paths (the packet's number, and the group's fill below it),
        // so that the small table's path holds no more than a loop of `track` and one
        // flag: every value more held across the loop costs the caller's loop a register.
        let direct = self.slots.len() <= CACHED_SLOTS;
        let mut group = [TrackInput::default(); GROUP];
        let mut k = 0;
        for p in packets {
            // Each path takes the input where it needs it: a copy of the whole input before
            // the branch would be made and kept around `track` even where it reads a few
            // fields of the caller's slice.
            if direct {
                // The whole table stays in the core's caches: nothing to fetch ahead.
                each(k, self.track(*p.borrow()));
            } else {
                group[k % GROUP] = *p.borrow();
                if k % GROUP == GROUP - 1 {
                    self.track_group(&group, k + 1 - GROUP, &mut each);
                }
            }
            k += 1;
        }
        let rest = k % GROUP;
        if !direct && rest > 0 {
            self.track_group(&group[..rest], k - rest, &mut each);
        }
    }

    /// [`FlowTable::track_batch`] on a table larger than the caches, for one group of up to
    /// [`GROUP`] packets, the first numbered `done`: their tags and slots fetched ahead,
    /// then tracked.
    fn track_group(
        &mut self,
        group: &[TrackInput],
        mut done: usize,
        each: &mut impl FnMut(usize, Tracked),
    ) {
        let mut prepared = [(FlowKey::default(), Direction::Forward, 0u64); GROUP];
        let prepared = &mut prepared[..group.len()];
        for (p, slot) in group.iter().zip(prepared.iter_mut()) {
            let (key, dir) = if self.symmetric {
                p.key.canonical()
            } else {
                (p.key, Direction::Forward)
            };
            let h = self.hash(&key);
            fetch::line(&self.tags[self.place(h).0]);
            *slot = (key, dir, h);
        }
        // Most flows live in their first set: fetch the slot its matching tag names.
        for &(_, _, h) in prepared.iter() {
            let (a, _, tag) = self.place(h);
            let m = tags::matching(&self.tags[a], tag);
            if m != 0 {
                self.slots[a * WAYS + tags::way(m)].fetch();
            }
        }
        for (p, &(key, dir, h)) in group.iter().zip(prepared.iter()) {
            let seen = Seen {
                dir,
                hash: h,
                len: p.len,
                ts_ns: p.ts_ns,
                tcp_flags: p.tcp_flags,
            };
            let t = self.track_hashed(key, seen);
            each(done, t);
            done += 1;
        }
    }

    #[inline(always)]
    fn track_hashed(&mut self, key: FlowKey, seen: Seen) -> Tracked {
        // The hit is accounted where it was found, once per set, so that each copy keeps the
        // slot's address it compared the key at (one copy after the two searches had to
        // compute it again, with a second bounds check).
        let (a, b, tag) = self.place(seen.hash);
        if let Some(slot) = self.find_in(a, tag, &key) {
            return self.account(slot, seen);
        }
        if let Some(slot) = self.find_in(b, tag, &key) {
            return self.account(slot, seen);
        }
        self.insert(key, seen)
    }

    /// One more packet of the live flow in `slot`.
    #[inline(always)]
    fn account(&mut self, slot: usize, seen: Seen) -> Tracked {
        let (s, d) = (&mut self.slots[slot], seen.dir as usize);
        if s.first_ns == NONE_SINCE {
            s.first_ns = seen.ts_ns; // the first packet since an active-timeout report
        }
        s.packets[d] += 1;
        s.bytes[d] += u64::from(seen.len);
        s.tcp_flags[d] |= seen.tcp_flags;
        s.last_ns = s.last_ns.max(seen.ts_ns);
        Tracked {
            id: s.id(slot),
            hash: (seen.hash >> 32) as u32,
            dir: seen.dir,
            created: false,
            evicted: false,
        }
    }

    /// A new flow for `key`, in the emptier candidate set or in place of the least recently
    /// seen flow of the two.
    #[inline(always)]
    fn insert(&mut self, key: FlowKey, seen: Seen) -> Tracked {
        let (a, b, tag) = self.place(seen.hash);
        // Occupied tags have the high bit set, so the empty slots are the bytes without it.
        let free = |set: usize| tags::free(&self.tags[set]);
        let fa = free(a);
        let (set, fm) = if fa.count_ones() >= SPILL_FREE {
            (a, fa)
        } else {
            let fb = free(b);
            if fb.count_ones() > fa.count_ones() {
                (b, fb)
            } else {
                (a, fa)
            }
        };
        let mut evicted = false;
        let slot = match fm {
            m if m != 0 => set * WAYS + tags::way(m),
            _ => {
                let victim = (a * WAYS..(a + 1) * WAYS)
                    .chain(b * WAYS..(b + 1) * WAYS)
                    .min_by_key(|&i| self.slots[i].last_ns)
                    .expect("WAYS > 0");
                // The victim's tag is overwritten below, and the table holds as many flows.
                self.len -= 1;
                self.counters.evicted += 1;
                evicted = evict(&mut self.aside, &mut self.slots[victim], victim);
                victim
            }
        };
        self.tags[slot / WAYS][slot % WAYS] = tag;
        self.len += 1;
        self.counters.created += 1;
        let s = &mut self.slots[slot];
        *s = Slot {
            key,
            first_ns: seen.ts_ns,
            last_ns: seen.ts_ns,
            initiator: seen.dir,
            generation: s.generation,
            ..Default::default()
        };
        let d = seen.dir as usize;
        s.packets[d] = 1;
        s.bytes[d] = u64::from(seen.len);
        s.tcp_flags[d] = seen.tcp_flags;
        Tracked {
            id: s.id(slot),
            hash: (seen.hash >> 32) as u32,
            dir: seen.dir,
            created: true,
            evicted,
        }
    }
}
