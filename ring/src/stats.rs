//! PACKET_STATISTICS for TPACKET_V3, accumulated across reads.
//!
//! The kernel zeroes its counters on every read, so a single read only tells what happened
//! since the previous one. For V3, `tp_packets` already includes `tp_drops`
//! (af_packet.c: `st.stats3.tp_packets += drops`).

/// Totals since the ring was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RingStats {
    /// Packets that passed the socket filter (delivered to the ring or dropped).
    pub packets: u64,
    /// Packets that passed the filter but found no room in the ring.
    pub drops: u64,
    /// Times the kernel froze the queue because the next block was still user-owned.
    pub freezes: u64,
}

impl RingStats {
    /// Packets written into the ring (`packets - drops`).
    pub fn received(&self) -> u64 {
        self.packets.saturating_sub(self.drops)
    }
}

/// Adds up successive kernel reads.
#[derive(Debug, Default)]
pub(crate) struct StatsAccumulator {
    total: RingStats,
}

impl StatsAccumulator {
    pub(crate) fn add(&mut self, packets: u32, drops: u32, freezes: u32) {
        self.total.packets += u64::from(packets);
        self.total.drops += u64::from(drops);
        self.total.freezes += u64::from(freezes);
    }
    pub(crate) fn total(&self) -> RingStats {
        self.total
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reads_accumulate() {
        let mut acc = StatsAccumulator::default();
        acc.add(10, 2, 1);
        acc.add(5, 0, 0);
        acc.add(u32::MAX, 1, 0);
        let t = acc.total();
        assert_eq!(t.packets, 15 + u64::from(u32::MAX));
        assert_eq!(t.drops, 3);
        assert_eq!(t.freezes, 1);
        assert_eq!(t.received(), 12 + u64::from(u32::MAX));
    }
}
