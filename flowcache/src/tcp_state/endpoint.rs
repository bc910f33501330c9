//! One direction of a connection as Zeek's TCP analyzer keeps it: its state and its sequence
//! space.

/// Zeek's test for an implausible sequence jump in a SYN or RST (`TOO_LARGE_SEQ_DELTA`).
pub(super) const TOO_LARGE_SEQ_DELTA: i32 = 1_048_576;

/// An endpoint's state in Zeek's TCP analyzer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Ep {
    #[default]
    Inactive,
    SynSent,
    SynAckSent,
    Partial,
    Established,
    Closed,
    Reset,
}

/// One direction's sequence space and history bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Endpoint {
    pub(super) start: u32,
    pub(super) last: u32,
    pub(super) ack: u32,
    /// Relative sequence numbers of the last SYN, FIN and RST (history repeats).
    pub(super) last_syn: u32,
    pub(super) last_fin: u32,
    pub(super) last_rst: u32,
    /// Retransmissions and zero windows seen (their letters at 1, 10, 100, ...).
    pub(super) rxmit: u32,
    pub(super) zero_windows: u32,
    pub(super) state: Ep,
    pub(super) prev: Ep,
    pub(super) fin_seen: bool,
}

impl Endpoint {
    pub(super) fn set(&mut self, s: Ep) {
        if s != self.state {
            self.prev = self.state;
            self.state = s;
        }
    }
    pub(super) fn init_seq(&mut self, start: u32, last: u32) {
        self.start = start;
        self.ack = start;
        self.last = last;
    }
    /// Payload bytes by the sequence space (Zeek's `TCP_Endpoint::Size`, within 32 bits).
    pub(super) fn size(&self, peer: &Endpoint) -> u32 {
        let no_data_acked = self.ack == self.start || self.ack == self.start.wrapping_add(1);
        if self.prev == Ep::SynSent
            && self.state == Ep::Reset
            && peer.state == Ep::Inactive
            && !no_data_acked
        {
            return 0;
        }
        let last = self.last.wrapping_sub(self.start);
        let ack = self.ack.wrapping_sub(self.start);
        // Neither the SYN's sequence number nor the FIN's is a payload byte.
        let size = last.max(ack).saturating_sub(1);
        if self.fin_seen {
            size.saturating_sub(1)
        } else {
            size
        }
    }
}

/// Signed distance from `b` to `a` in sequence space.
pub(super) fn delta(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}
