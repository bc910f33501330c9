//! Several fanout shards, one output in time-stamp order: each shard's packets come in order
//! (one ring each), but the shards hand over whole blocks at different moments. The merge
//! holds copies of the packets and writes the oldest first once it is safe: when every shard
//! has delivered something newer (its watermark), or at the latest after a bounded delay (an
//! idle shard must not hold the output back for ever). A packet that its shard delivers later
//! than the delay after newer ones were written is still written, and counted as late.
//!
//! Copies go into recycled buffers: no allocation per packet once the pool has grown to the
//! number of packets in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::record::Record;

/// One held packet.
struct Held {
    wire_len: u32,
    vlan: Option<(u16, u16)>,
    ll: Option<zcrx_ring::LinkAddr>,
    data: Vec<u8>,
}

/// The reorder buffer of a multi-shard capture.
pub(crate) struct Merge {
    /// (time stamp, arrival number, slot) of every held packet, oldest on top.
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    slots: Vec<Held>,
    free: Vec<usize>,
    /// The newest time stamp each shard has delivered.
    newest: Vec<u64>,
    delay_ns: u64,
    arrivals: u64,
    /// Time stamp of the last packet written.
    last: u64,
    /// Packets written after a packet with a later time stamp.
    pub(crate) late: u64,
    /// At most this many packets held (then the oldest goes out whatever the watermark).
    max_held: usize,
}

impl Merge {
    /// A merge of `shards` shards writing a packet at the latest `delay_ns` after its time
    /// stamp.
    pub(crate) fn new(shards: usize, delay_ns: u64) -> Merge {
        Merge {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            newest: vec![0; shards],
            delay_ns,
            arrivals: 0,
            last: 0,
            late: 0,
            max_held: 1 << 20,
        }
    }

    /// Holds a copy of `rec` from shard `shard`.
    pub(crate) fn push(&mut self, shard: usize, rec: &Record<'_>) {
        let slot = match self.free.pop() {
            Some(i) => {
                let h = &mut self.slots[i];
                h.data.clear();
                h.data.extend_from_slice(rec.data);
                h.wire_len = rec.wire_len;
                h.vlan = rec.vlan;
                h.ll = rec.ll;
                i
            }
            None => {
                self.slots.push(Held {
                    wire_len: rec.wire_len,
                    vlan: rec.vlan,
                    ll: rec.ll,
                    data: rec.data.to_vec(),
                });
                self.slots.len() - 1
            }
        };
        self.arrivals += 1;
        self.heap.push(Reverse((rec.ts_ns, self.arrivals, slot)));
        if let Some(n) = self.newest.get_mut(shard) {
            *n = (*n).max(rec.ts_ns);
        }
    }

    /// Writes, oldest first, every held packet that is safe to write at `now_ns` (all of them
    /// with `all`) through `write`, which returns false to stop.
    pub(crate) fn drain(
        &mut self,
        now_ns: u64,
        all: bool,
        mut write: impl FnMut(&Record<'_>) -> bool,
    ) -> bool {
        let watermark = self
            .newest
            .iter()
            .copied()
            .min()
            .unwrap_or(0)
            .max(now_ns.saturating_sub(self.delay_ns));
        while let Some(&Reverse((ts, _, slot))) = self.heap.peek() {
            if !all && ts > watermark && self.heap.len() <= self.max_held {
                break;
            }
            self.heap.pop();
            if ts < self.last {
                self.late += 1;
            }
            self.last = self.last.max(ts);
            let h = &self.slots[slot];
            let go_on = write(&Record {
                ts_ns: ts,
                wire_len: h.wire_len,
                data: &h.data,
                vlan: h.vlan,
                ll: h.ll,
            });
            self.free.push(slot);
            if !go_on {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts: u64, data: &[u8]) -> Record<'_> {
        Record {
            ts_ns: ts,
            wire_len: data.len() as u32,
            data,
            vlan: None,
            ll: None,
        }
    }

    #[test]
    fn two_shards_merge_into_time_order_and_an_idle_shard_waits_only_the_delay() {
        let mut m = Merge::new(2, 1000);
        let mut out = Vec::new();
        // Shard 0 delivers a batch; shard 1 has delivered nothing: held until the delay.
        for ts in [10, 20, 30] {
            m.push(0, &rec(ts, b"a"));
        }
        m.drain(100, false, |r| {
            out.push(r.ts_ns);
            true
        });
        assert!(out.is_empty());
        // Shard 1's batch, interleaved in time: everything up to the smaller newest goes out.
        for ts in [15, 25] {
            m.push(1, &rec(ts, b"b"));
        }
        m.drain(100, false, |r| {
            out.push(r.ts_ns);
            true
        });
        assert_eq!(out, [10, 15, 20, 25]);
        // Later, nothing more from shard 1: 30 goes out once 1000 ns have passed.
        m.drain(1029, false, |r| {
            out.push(r.ts_ns);
            true
        });
        assert_eq!(out, [10, 15, 20, 25]);
        m.drain(1030, false, |r| {
            out.push(r.ts_ns);
            true
        });
        assert_eq!(out, [10, 15, 20, 25, 30]);
        // A straggler older than what was written is written and counted as late.
        m.push(1, &rec(5, b"c"));
        m.drain(2000, true, |r| {
            out.push(r.ts_ns);
            true
        });
        assert_eq!(m.late, 1);
        // Buffers are recycled: 6 packets, at most 5 held at once.
        assert_eq!(m.slots.len(), 5);
    }

    #[test]
    fn equal_time_stamps_keep_arrival_order_and_a_stop_is_honoured() {
        let mut m = Merge::new(1, 0);
        m.push(0, &rec(7, b"1"));
        m.push(0, &rec(7, b"2"));
        m.push(0, &rec(7, b"3"));
        let mut got = Vec::new();
        let go_on = m.drain(0, true, |r| {
            got.push(r.data[0]);
            got.len() < 2
        });
        assert!(!go_on);
        assert_eq!(got, b"12");
        m.drain(0, true, |r| {
            got.push(r.data[0]);
            true
        });
        assert_eq!(got, b"123");
    }
}
