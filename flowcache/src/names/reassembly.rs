//! The per-direction payload budget and in-order reassembly.
//!
//! A direction keeps at most [`PAYLOAD_BUDGET`] bytes (the first bytes of its stream) from at
//! most [`SEGMENT_BUDGET`] payload-carrying segments, whichever is reached first. Segments are
//! placed by their offset in the stream (a TCP sequence number relative to the stream's first
//! byte, or a QUIC CRYPTO frame's offset), so segments out of order and retransmissions that
//! overlap land where they belong; a byte written twice keeps the later copy. Nothing past the
//! budget is stored or looked at: a segment after the eighth, or bytes past the 4096th, cost a
//! comparison and nothing more.
//!
//! The buffer is allocated on the first segment that carries payload (a flow that never sends
//! any, such as a half-open handshake, costs none) and is exactly [`PAYLOAD_BUDGET`] bytes; the
//! bookkeeping is inline. [`Reassembly::heap_bytes`] says what one holds.

/// Payload bytes kept per direction: the first 4 KiB of the stream.
pub const PAYLOAD_BUDGET: usize = 4096;
/// Payload-carrying segments (or QUIC CRYPTO frames) accepted per direction.
pub const SEGMENT_BUDGET: usize = 8;

/// Where a segment went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Placed {
    /// Bytes stored (all or a prefix of the segment, up to the byte budget).
    Stored(usize),
    /// Inside the segment budget but entirely past the byte budget (or before a stream start
    /// fixed by a SYN): counted, not stored.
    Outside,
    /// The segment budget was already spent: ignored.
    OverBudget,
    /// The segment carried no payload.
    Empty,
}

/// One direction's first payload bytes, placed by stream offset.
#[derive(Debug, Clone, Default)]
pub struct Reassembly {
    buf: Option<Box<[u8]>>,
    /// Covered byte ranges `[start, end)`, sorted and disjoint (not even adjacent).
    ranges: [(u16, u16); SEGMENT_BUDGET],
    nranges: u8,
    segments: u8,
    /// TCP: the sequence number of stream offset 0, once known.
    base: Option<u32>,
    /// TCP: the base came from a SYN (the stream cannot start earlier).
    anchored: bool,
}

impl Reassembly {
    /// An empty direction (no allocation).
    pub const fn new() -> Reassembly {
        Reassembly {
            buf: None,
            ranges: [(0, 0); SEGMENT_BUDGET],
            nranges: 0,
            segments: 0,
            base: None,
            anchored: false,
        }
    }

    /// Payload-carrying segments seen, at most [`SEGMENT_BUDGET`].
    pub fn segments(&self) -> usize {
        usize::from(self.segments)
    }

    /// Whether the segment budget is spent: later segments are ignored.
    pub fn is_spent(&self) -> bool {
        usize::from(self.segments) >= SEGMENT_BUDGET || self.contiguous().len() >= PAYLOAD_BUDGET
    }

    /// Heap bytes held: [`PAYLOAD_BUDGET`] once a segment with payload arrived, else 0.
    pub fn heap_bytes(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.len())
    }

    /// Whether a TCP segment at `seq` would start the stream with nothing stored yet: the
    /// segment alone is the stream's first bytes, and can be read without being copied.
    pub fn starts_stream(&self, seq: u32) -> bool {
        self.segments == 0 && self.base.is_none_or(|b| b == seq)
    }

    /// Frees the buffer (once the direction's names are read); later segments are ignored.
    pub fn release(&mut self) {
        self.buf = None;
        self.segments = SEGMENT_BUDGET as u8;
        self.nranges = 0;
    }

    /// The stream's first bytes without a gap (empty until offset 0 arrived).
    pub fn contiguous(&self) -> &[u8] {
        match (&self.buf, self.nranges) {
            (Some(buf), n) if n > 0 && self.ranges[0].0 == 0 => {
                &buf[..usize::from(self.ranges[0].1)]
            }
            _ => &[],
        }
    }

    /// A TCP SYN's sequence number: the stream starts at `seq + 1`, and nothing before it is
    /// part of the stream.
    pub fn syn(&mut self, seq: u32) {
        if self.base.is_none() && self.nranges == 0 {
            self.base = Some(seq.wrapping_add(1));
            self.anchored = true;
        }
    }

    /// Places a TCP segment's payload by its sequence number. Without a SYN, the first
    /// segment's sequence number starts the stream, and an earlier segment within the byte
    /// budget moves the start back (what was stored moves with it).
    pub fn insert_tcp(&mut self, seq: u32, payload: &[u8]) -> Placed {
        if payload.is_empty() {
            return Placed::Empty;
        }
        if usize::from(self.segments) >= SEGMENT_BUDGET {
            return Placed::OverBudget;
        }
        let base = *self.base.get_or_insert(seq);
        let ahead = seq.wrapping_sub(base);
        if ahead < 1 << 31 {
            return self.insert_at(u64::from(ahead), payload);
        }
        // Before the stream's start.
        let back = base.wrapping_sub(seq) as usize;
        if self.anchored || back >= PAYLOAD_BUDGET {
            // The part of the segment from the start on still belongs to the stream.
            if back < payload.len() {
                return self.insert_at(0, &payload[back..]);
            }
            self.segments += 1;
            return Placed::Outside;
        }
        self.shift(back);
        self.base = Some(seq);
        self.insert_at(0, payload)
    }

    /// Moves what is stored `by` bytes later in the stream (a new start before the old one);
    /// bytes pushed past the budget are dropped.
    fn shift(&mut self, by: usize) {
        if let Some(buf) = &mut self.buf {
            buf.copy_within(..PAYLOAD_BUDGET - by, by);
        }
        let mut kept = 0;
        for i in 0..usize::from(self.nranges) {
            let (s, e) = self.ranges[i];
            let s = usize::from(s) + by;
            let e = (usize::from(e) + by).min(PAYLOAD_BUDGET);
            if s < e {
                self.ranges[kept] = (s as u16, e as u16);
                kept += 1;
            }
        }
        self.nranges = kept as u8;
    }

    /// Places `data` at stream `offset` (a QUIC CRYPTO frame, or a TCP segment relative to
    /// the stream's start). Counts against the segment budget.
    pub fn insert_at(&mut self, offset: u64, data: &[u8]) -> Placed {
        if data.is_empty() {
            return Placed::Empty;
        }
        if usize::from(self.segments) >= SEGMENT_BUDGET {
            return Placed::OverBudget;
        }
        self.segments += 1;
        let Ok(start) = usize::try_from(offset) else {
            return Placed::Outside;
        };
        if start >= PAYLOAD_BUDGET {
            return Placed::Outside;
        }
        let end = start.saturating_add(data.len()).min(PAYLOAD_BUDGET);
        let buf = self
            .buf
            .get_or_insert_with(|| vec![0u8; PAYLOAD_BUDGET].into_boxed_slice());
        buf[start..end].copy_from_slice(&data[..end - start]);
        self.cover(start as u16, end as u16);
        Placed::Stored(end - start)
    }

    /// Adds `[s, e)` to the covered ranges, merging overlapping and adjacent ones. At most one
    /// range is added per segment, so [`SEGMENT_BUDGET`] slots always suffice.
    fn cover(&mut self, mut s: u16, mut e: u16) {
        let mut out = [(0u16, 0u16); SEGMENT_BUDGET];
        let mut n = 0;
        let mut placed = false;
        for i in 0..usize::from(self.nranges) {
            let (rs, re) = self.ranges[i];
            if re < s {
                out[n] = (rs, re);
                n += 1;
            } else if rs > e {
                if !placed {
                    out[n] = (s, e);
                    n += 1;
                    placed = true;
                }
                out[n] = (rs, re);
                n += 1;
            } else {
                s = s.min(rs);
                e = e.max(re);
            }
        }
        if !placed {
            out[n] = (s, e);
            n += 1;
        }
        self.ranges = out;
        self.nranges = n as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn segments_out_of_order_and_overlapping_are_placed_by_sequence() {
        let s = stream(3000);
        let isn = 0xffff_ff00u32; // wraps inside the stream
        let mut r = Reassembly::new();
        r.syn(isn);
        let at = |o: usize| isn.wrapping_add(1).wrapping_add(o as u32);
        assert_eq!(r.insert_tcp(at(1000), &s[1000..2000]), Placed::Stored(1000));
        assert_eq!(r.contiguous(), &[] as &[u8]);
        assert_eq!(r.insert_tcp(at(500), &s[500..1200]), Placed::Stored(700)); // overlaps
        assert_eq!(r.insert_tcp(at(0), &s[0..600]), Placed::Stored(600));
        assert_eq!(r.contiguous(), &s[..2000]);
        assert_eq!(r.insert_tcp(at(0), &s[0..600]), Placed::Stored(600)); // retransmission
        assert_eq!(r.insert_tcp(at(2000), &s[2000..]), Placed::Stored(1000));
        assert_eq!(r.contiguous(), &s[..]);
        assert_eq!(r.segments(), 5);
    }

    #[test]
    fn an_earlier_segment_without_a_syn_moves_the_start_back() {
        let s = stream(1500);
        let mut r = Reassembly::new();
        r.insert_tcp(10_500, &s[500..]);
        r.insert_tcp(10_000, &s[..500]);
        assert_eq!(r.contiguous(), &s[..]);
        // With a SYN the start is fixed: bytes before it are not the stream's.
        let mut r = Reassembly::new();
        r.syn(9_999);
        assert_eq!(r.insert_tcp(9_990, &s[..5]), Placed::Outside);
        assert_eq!(r.insert_tcp(9_995, &s[..10]), Placed::Stored(5));
        assert_eq!(r.contiguous(), &s[5..10]);
    }

    #[test]
    fn the_budget_stops_at_eight_segments_or_four_kib() {
        let s = stream(10_000);
        let mut r = Reassembly::new();
        r.syn(0);
        assert_eq!(r.insert_tcp(1, &s), Placed::Stored(PAYLOAD_BUDGET));
        assert!(r.is_spent());
        assert_eq!(r.contiguous(), &s[..PAYLOAD_BUDGET]);
        let mut r = Reassembly::new();
        r.syn(0);
        for i in 0..SEGMENT_BUDGET {
            assert_eq!(r.insert_tcp(1 + i as u32, &s[i..i + 1]), Placed::Stored(1));
        }
        assert_eq!(r.insert_tcp(9, &s[8..9]), Placed::OverBudget);
        assert_eq!(r.contiguous(), &s[..8]);
        assert_eq!(r.heap_bytes(), PAYLOAD_BUDGET);
        r.release();
        assert_eq!(r.heap_bytes(), 0);
        assert_eq!(r.insert_tcp(10, &s[..1]), Placed::OverBudget);
    }

    proptest::proptest! {
        /// A stream cut into segments, shuffled, some sent twice: within the segment budget
        /// the contiguous bytes are the stream's prefix up to the first byte no segment
        /// carried, whatever the order and the ISN (sequence numbers wrap).
        #[test]
        fn any_order_of_segments_gives_the_stream(
            len in 1usize..6000,
            cuts in proptest::collection::vec(1usize..6000, 0..7),
            order in proptest::collection::vec(0usize..64, 0..12),
            isn: u32,
            syn: bool,
        ) {
            let s = stream(len);
            let mut bounds: Vec<usize> = cuts.into_iter().filter(|&c| c < len).collect();
            bounds.push(0);
            bounds.push(len);
            bounds.sort_unstable();
            bounds.dedup();
            let segs: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
            // Every segment once, in an order `order` shuffles, then a few again.
            let mut sends: Vec<usize> = (0..segs.len()).collect();
            for (i, o) in order.iter().enumerate() {
                let (j, k) = (o % sends.len(), i % sends.len());
                sends.swap(k, j);
            }
            sends.extend(order.iter().take(2).map(|o| o % segs.len()));
            let mut r = Reassembly::new();
            if syn {
                r.syn(isn);
            }
            let mut model = vec![false; PAYLOAD_BUDGET];
            let mut start = None::<usize>; // without a SYN: the lowest offset sent so far
            for (n, &i) in sends.iter().enumerate() {
                let (a, b) = segs[i];
                let placed = r.insert_tcp(isn.wrapping_add(1).wrapping_add(a as u32), &s[a..b]);
                if n >= SEGMENT_BUDGET {
                    proptest::prop_assert_eq!(placed, Placed::OverBudget);
                    continue;
                }
                let base = if syn { 0 } else { *start.get_or_insert(a) };
                if a < base && base - a < PAYLOAD_BUDGET {
                    // The start moves back (within the budget) and what was stored moves;
                    // further back, only the part from the start on is the stream's.
                    let mut moved = vec![false; PAYLOAD_BUDGET];
                    for (o, &m) in model.iter().enumerate() {
                        if m && o + base - a < PAYLOAD_BUDGET {
                            moved[o + base - a] = true;
                        }
                    }
                    model = moved;
                    start = Some(a);
                }
                let base = if syn { 0 } else { start.unwrap_or(a) };
                for o in a..b {
                    if o >= base && o - base < PAYLOAD_BUDGET {
                        model[o - base] = true;
                    }
                }
                let base_now = if syn { 0 } else { start.unwrap() };
                let want = model.iter().take_while(|&&m| m).count();
                proptest::prop_assert_eq!(r.contiguous(), &s[base_now..base_now + want]);
            }
            proptest::prop_assert!(r.heap_bytes() <= PAYLOAD_BUDGET);
        }
    }

    #[test]
    fn a_direction_without_payload_allocates_nothing() {
        let mut r = Reassembly::new();
        r.syn(5);
        assert_eq!(r.insert_tcp(6, &[]), Placed::Empty);
        assert_eq!(r.heap_bytes(), 0);
    }
}
