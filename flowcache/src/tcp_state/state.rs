//! [`TcpState`]: the state machine over both endpoints, and the history letters.

use super::conn_state::ConnState;
use super::endpoint::{delta, Endpoint, Ep, TOO_LARGE_SEQ_DELTA};
use super::segment::TcpSegment;
use crate::key::Direction;
use crate::record::tcp;

/// The most history letters kept.
pub const HISTORY_MAX: usize = 16;

/// History letters recorded once a direction: bit positions in `TcpState::seen` (the
/// responder's 8 above the originator's).
const SEEN_S: u16 = 1;
const SEEN_H: u16 = 2;
const SEEN_A: u16 = 4;
const SEEN_D: u16 = 8;
const SEEN_F: u16 = 16;
const SEEN_R: u16 = 32;
const SEEN_I: u16 = 64;
const SEEN_Q: u16 = 128;

/// A TCP connection's state and history (see the [module](crate::tcp_state) docs), 92 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpState {
    /// Index 0 the originator, 1 the responder.
    ep: [Endpoint; 2],
    /// The originator's direction relative to the flow's key; `None` before a segment.
    orig: Option<Direction>,
    seen: u16,
    len: u8,
    history: [u8; HISTORY_MAX],
}

impl TcpState {
    /// A connection with nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The originator's direction (the first segment's), `None` before one was seen.
    pub fn originator(&self) -> Option<Direction> {
        self.orig
    }

    /// The history letters so far (at most [`HISTORY_MAX`]).
    pub fn history(&self) -> &str {
        // Only ASCII letters are ever written.
        std::str::from_utf8(&self.history[..usize::from(self.len)]).unwrap_or_default()
    }

    fn add(&mut self, is_orig: bool, letter: u8) {
        if usize::from(self.len) < HISTORY_MAX {
            self.history[usize::from(self.len)] = if is_orig {
                letter.to_ascii_uppercase()
            } else {
                letter
            };
            self.len += 1;
        }
    }

    /// Records `letter` if this direction has not had it; returns whether it had.
    fn check(&mut self, is_orig: bool, bit: u16, letter: u8) -> bool {
        let bit = if is_orig { bit } else { bit << 8 };
        if self.seen & bit == 0 {
            self.seen |= bit;
            self.add(is_orig, letter);
            false
        } else {
            true
        }
    }

    /// Counts an event whose letter is recorded at the 1st, 10th, 100th, ... occurrence.
    fn scaled(&mut self, is_orig: bool, count: u32, letter: u8) {
        let mut t = 1u32;
        while t < count {
            match t.checked_mul(10) {
                Some(n) => t = n,
                None => return,
            }
        }
        if t == count {
            self.add(is_orig, letter);
        }
    }

    /// Takes one segment, sent `dir` relative to the flow's key (a [`crate::Tracked::dir`]
    /// or [`crate::FlowTag::dir`]).
    #[inline(always)]
    pub fn observe(&mut self, dir: Direction, seg: &TcpSegment) {
        if !self.observe_steady(dir, seg) {
            self.observe_any(dir, seg);
        }
    }

    /// The segment of an established connection that changes nothing but the sequence
    /// numbers (no SYN, FIN or RST, a window open, both endpoints established, its history
    /// letter already recorded for this direction): what [`TcpState::observe_any`] does with
    /// it, without the rest of its tests. Returns `false`, having changed nothing, for any
    /// other segment. (The whole connection after its handshake takes this path; a test
    /// checks that both give the same state on every sequence of segments.)
    #[inline(always)]
    fn observe_steady(&mut self, dir: Direction, seg: &TcpSegment) -> bool {
        let Some(orig) = self.orig else {
            return false;
        };
        if seg.flags & (tcp::SYN | tcp::FIN | tcp::RST) != 0 || seg.window == 0 {
            return false;
        }
        let is_orig = dir == orig;
        let (me, peer) = if is_orig { (0, 1) } else { (1, 0) };
        if self.ep[me].state != Ep::Established || self.ep[peer].state != Ep::Established {
            return false;
        }
        let ack = seg.has(tcp::ACK);
        let letter = if seg.payload_len > 0 {
            SEEN_D
        } else if ack {
            SEEN_A
        } else {
            0
        };
        let bit = if is_orig { letter } else { letter << 8 };
        if self.seen & bit != bit {
            return false;
        }
        if ack {
            let p = &mut self.ep[peer];
            if delta(seg.ack, p.start) >= 0 {
                let d = delta(seg.ack, p.ack);
                if !(seg.ack == 0 && d > TOO_LARGE_SEQ_DELTA) && d > 0 {
                    p.ack = seg.ack;
                }
            }
        }
        let len = seg.payload_len;
        let past = seg.seq.wrapping_add(len);
        let e = &mut self.ep[me];
        if delta(past, e.last) > 0 {
            e.last = past;
        } else if len > 0 {
            e.rxmit = e.rxmit.saturating_add(1);
            let n = e.rxmit;
            self.scaled(is_orig, n, b't');
        }
        true
    }

    /// [`TcpState::observe`] for any segment: Zeek's steps in order (sequence space, history,
    /// zero windows, acknowledgments, retransmissions, transitions), each a function of its
    /// own, inlined here. Out of line: the steady path is what every packet's loop keeps.
    #[inline(never)]
    fn observe_any(&mut self, dir: Direction, seg: &TcpSegment) {
        let orig = self.originator_at(dir, seg);
        let is_orig = dir == orig;
        let (me, peer) = if is_orig { (0, 1) } else { (1, 0) };
        let (syn, fin, rst, ack) = (
            seg.has(tcp::SYN),
            seg.has(tcp::FIN),
            seg.has(tcp::RST),
            seg.has(tcp::ACK),
        );
        let len = seg.payload_len;
        let mut seg_len = len.wrapping_add(u32::from(syn) + u32::from(fin));
        if rst {
            seg_len = seg_len.wrapping_sub(len);
        }
        let past = seg.seq.wrapping_add(seg_len);

        self.init_endpoint(me, seg, past);
        let rel = seg.seq.wrapping_sub(self.ep[me].start);
        self.history_of(is_orig, me, seg, rel);
        self.zero_window(is_orig, me, peer, seg);
        if fin {
            self.ep[me].fin_seen = true;
        }
        if ack {
            self.acknowledge(peer, seg);
        }
        self.retransmission(is_orig, me, seg, past);
        self.transition(is_orig, me, peer, seg);
    }

    /// The connection's originator, set by its first segment: that segment's sender, unless
    /// the connection was first seen at its SYN-ACK, whose sender is the responder.
    #[inline(always)]
    fn originator_at(&mut self, dir: Direction, seg: &TcpSegment) -> Direction {
        let syn_ack =
            seg.flags & (tcp::SYN | tcp::ACK | tcp::FIN | tcp::RST) == tcp::SYN | tcp::ACK;
        *self.orig.get_or_insert(match (syn_ack, dir) {
            (true, Direction::Forward) => Direction::Reverse,
            (true, Direction::Reverse) => Direction::Forward,
            (false, d) => d,
        })
    }

    /// The sending endpoint's sequence space, as Zeek's `init_endpoint` sets it up; `past`
    /// is the sequence number after the segment.
    #[inline(always)]
    fn init_endpoint(&mut self, me: usize, seg: &TcpSegment, past: u32) {
        let syn = seg.has(tcp::SYN);
        let e = &mut self.ep[me];
        match e.state {
            Ep::Inactive => {
                if syn {
                    e.init_seq(seg.seq, past);
                } else {
                    let start = seg.seq.wrapping_sub(1);
                    e.init_seq(start, seg.seq);
                }
            }
            Ep::SynSent | Ep::SynAckSent => {
                if syn && seg.seq != e.start {
                    e.init_seq(seg.seq, past);
                }
            }
            Ep::Established | Ep::Partial => {
                if syn {
                    e.init_seq(seg.seq, past);
                }
            }
            Ep::Reset => {
                if syn && e.prev == Ep::Inactive {
                    e.init_seq(seg.seq, past);
                }
            }
            Ep::Closed => {}
        }
    }

    /// Zero windows: not with or after a RST, nor once the peer has closed.
    #[inline(always)]
    fn zero_window(&mut self, is_orig: bool, me: usize, peer: usize, seg: &TcpSegment) {
        if seg.window == 0
            && !seg.has(tcp::RST)
            && self.ep[peer].state != Ep::Closed
            && self.ep[me].state != Ep::Reset
        {
            let e = &mut self.ep[me];
            e.zero_windows = e.zero_windows.saturating_add(1);
            let n = e.zero_windows;
            self.scaled(is_orig, n, b'w');
        }
    }

    /// An ACK of the peer's sequence space: the peer numbered as if its SYN had been seen if
    /// it was not, else its acknowledged point moved forward.
    #[inline(always)]
    fn acknowledge(&mut self, peer: usize, seg: &TcpSegment) {
        let p = &mut self.ep[peer];
        if p.state == Ep::Inactive {
            // Number the peer as if its SYN had been seen.
            let s = seg.ack.wrapping_sub(1);
            p.init_seq(s, s);
        } else if delta(seg.ack, p.start) >= 0 && !seg.has(tcp::RST) {
            let d = delta(seg.ack, p.ack);
            if !(seg.ack == 0 && d > TOO_LARGE_SEQ_DELTA) && d > 0 {
                p.ack = seg.ack;
            }
        }
    }

    /// The endpoint's last sequence number; a payload at or below it is a retransmission.
    #[inline(always)]
    fn retransmission(&mut self, is_orig: bool, me: usize, seg: &TcpSegment, past: u32) {
        let (syn, fin, rst) = (seg.has(tcp::SYN), seg.has(tcp::FIN), seg.has(tcp::RST));
        let len = seg.payload_len;
        let e = &mut self.ep[me];
        let d = delta(past, e.last);
        if (syn || rst) && !(-TOO_LARGE_SEQ_DELTA..=TOO_LARGE_SEQ_DELTA).contains(&d) {
        } else if fin && e.last == e.start.wrapping_add(1) {
            e.last = past;
        } else if e.state == Ep::Reset {
        } else if d > 0 {
            e.last = past;
        } else if len > 0 {
            e.rxmit = e.rxmit.saturating_add(1);
            let n = e.rxmit;
            self.scaled(is_orig, n, b't');
        }
    }

    /// The history letters of a segment (Zeek's `update_history`).
    fn history_of(&mut self, is_orig: bool, me: usize, seg: &TcpSegment, rel: u32) {
        let (syn, fin, rst) = (seg.has(tcp::SYN), seg.has(tcp::FIN), seg.has(tcp::RST));
        let bits = u8::from(syn) + u8::from(fin) + u8::from(rst);
        if bits > 1 {
            if fin && rst {
                self.check(is_orig, SEEN_I, b'i');
            } else {
                self.check(is_orig, SEEN_Q, b'q');
            }
        } else if syn {
            let (bit, letter) = if seg.has(tcp::ACK) {
                (SEEN_H, b'h')
            } else {
                (SEEN_S, b's')
            };
            if self.check(is_orig, bit, letter) && rel != self.ep[me].last_syn {
                self.add(is_orig, letter);
            }
            self.ep[me].last_syn = rel;
        } else if fin {
            // A FIN's sequence number is that of its end.
            let at = rel.wrapping_add(seg.payload_len);
            if self.check(is_orig, SEEN_F, b'f') && at != self.ep[me].last_fin {
                self.add(is_orig, b'f');
            }
            self.ep[me].last_fin = at;
        } else if rst {
            if self.check(is_orig, SEEN_R, b'r') && rel != self.ep[me].last_rst {
                self.add(is_orig, b'r');
            }
            self.ep[me].last_rst = rel;
        } else if seg.payload_len > 0 {
            self.check(is_orig, SEEN_D, b'd');
        } else if seg.has(tcp::ACK) {
            self.check(is_orig, SEEN_A, b'a');
        }
    }

    /// The endpoint state machine (Zeek's `UpdateStateMachine`).
    fn transition(&mut self, is_orig: bool, me: usize, peer: usize, seg: &TcpSegment) {
        let (syn, fin, rst, ack) = (
            seg.has(tcp::SYN),
            seg.has(tcp::FIN),
            seg.has(tcp::RST),
            seg.has(tcp::ACK),
        );
        let peer_state = self.ep[peer].state;
        match self.ep[me].state {
            Ep::Inactive => {
                if syn {
                    if is_orig {
                        self.ep[me].set(if ack { Ep::SynAckSent } else { Ep::SynSent });
                    } else {
                        if peer_state == Ep::SynSent {
                            self.ep[peer].set(Ep::Established);
                        }
                        self.ep[me].set(Ep::Established);
                    }
                }
                if fin {
                    self.ep[me].set(Ep::Closed);
                }
                if rst {
                    self.ep[me].set(Ep::Reset);
                }
                if self.ep[me].state == Ep::Inactive {
                    let orig_syn_sent = self.ep[0].state == Ep::SynSent;
                    if !is_orig && seg.payload_len == 0 && orig_syn_sent {
                        // An ACK of the SYN before the SYN-ACK: not yet a partial connection.
                    } else if ack && peer_state == Ep::Established {
                        self.ep[me].set(Ep::Established);
                    } else {
                        self.ep[me].set(Ep::Partial);
                    }
                }
            }
            Ep::SynSent | Ep::SynAckSent => {
                if fin {
                    self.ep[me].set(Ep::Closed);
                }
                if rst {
                    self.ep[me].set(Ep::Reset);
                }
            }
            Ep::Established | Ep::Partial => {
                if syn && self.ep[me].state == Ep::Partial && peer_state == Ep::Inactive && !ack {
                    self.ep[me].set(Ep::SynSent);
                }
                if fin && !rst {
                    self.ep[me].set(Ep::Closed);
                    let p = &mut self.ep[peer];
                    if p.state == Ep::Reset && p.prev == Ep::Closed {
                        // The peer's FIN then RST: a normal close after all.
                        p.set(Ep::Closed);
                    }
                }
                if rst {
                    self.ep[me].set(Ep::Reset);
                }
            }
            Ep::Closed => {
                if rst && peer_state != Ep::Closed {
                    self.ep[me].set(Ep::Reset);
                }
            }
            Ep::Reset => {}
        }
    }

    /// The connection's state now (Zeek's `conn_state` for TCP); `OTH` before a segment.
    pub fn conn_state(&self) -> ConnState {
        let (o, r) = (&self.ep[0], &self.ep[1]);
        let (os, rs) = (o.state, r.state);
        let o_inactive = matches!(os, Ep::Inactive | Ep::Partial);
        let r_inactive = matches!(rs, Ep::Inactive | Ep::Partial);
        if rs == Ep::Reset {
            if matches!(os, Ep::SynSent | Ep::SynAckSent)
                || (os == Ep::Reset && o.size(r) == 0 && r.size(o) == 0)
            {
                ConnState::REJ
            } else if o_inactive {
                ConnState::RSTRH
            } else {
                ConnState::RSTR
            }
        } else if os == Ep::Reset {
            if r_inactive {
                if self.syn_then_reset() {
                    ConnState::RSTOS0
                } else {
                    ConnState::OTH
                }
            } else {
                ConnState::RSTO
            }
        } else if rs == Ep::Closed && os == Ep::Closed {
            ConnState::SF
        } else if os == Ep::Closed {
            if r_inactive {
                ConnState::SH
            } else {
                ConnState::S2
            }
        } else if rs == Ep::Closed {
            if o_inactive {
                ConnState::SHR
            } else {
                ConnState::S3
            }
        } else if os == Ep::SynSent && rs == Ep::Inactive {
            ConnState::S0
        } else if os == Ep::Established && rs == Ep::Established {
            ConnState::S1
        } else {
            ConnState::OTH
        }
    }

    /// Zeek's test for RSTOS0, the history matching `^?S[^HAFGIQ]*R.*`: the originator's SYN
    /// first, then its RST with none of its SYN-ACKs, ACKs, FINs, gaps, or odd flag mixes
    /// before.
    fn syn_then_reset(&self) -> bool {
        let h = &self.history[..usize::from(self.len)];
        let Some((&b'S', rest)) = h.split_first() else {
            return false;
        };
        for &c in rest {
            match c {
                b'R' => return true,
                b'H' | b'A' | b'F' | b'G' | b'I' | b'Q' => return false,
                _ => {}
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A segment of a small connection: flags from the mixes that matter, sequence and
    /// acknowledgment numbers near each side's start, below it too (so that in-order data, duplicates and
    /// jumps all occur), payloads empty or short, windows sometimes zero.
    fn segment() -> impl Strategy<Value = (bool, TcpSegment)> {
        let flags = prop::sample::select(vec![
            tcp::SYN,
            tcp::SYN | tcp::ACK,
            tcp::ACK,
            tcp::ACK,
            tcp::ACK,
            tcp::ACK | 0x08,
            tcp::FIN | tcp::ACK,
            tcp::RST,
            tcp::RST | tcp::ACK,
            0,
            tcp::FIN | tcp::RST,
        ]);
        (
            any::<bool>(),
            flags,
            0u32..60,
            0u32..60,
            prop::sample::select(vec![0u32, 0, 1, 10, 100]),
            prop::sample::select(vec![0u16, 1000, 1000, 1000]),
        )
            .prop_map(|(fwd, flags, s, a, len, window)| {
                let (seq, ack) = if fwd {
                    (980 + s, 4980 + a)
                } else {
                    (4980 + s, 980 + a)
                };
                (
                    fwd,
                    TcpSegment {
                        flags,
                        seq,
                        ack,
                        payload_len: len,
                        window,
                    },
                )
            })
    }

    /// SYN, SYN-ACK, ACK, then data and ACKs both ways (the sides of [`segment`]).
    fn handshake() -> Vec<(bool, TcpSegment)> {
        let seg = |flags: u8, seq: u32, ack: u32, len: u32| TcpSegment {
            flags,
            seq,
            ack,
            payload_len: len,
            window: 1000,
        };
        vec![
            (true, seg(tcp::SYN, 1000, 0, 0)),
            (false, seg(tcp::SYN | tcp::ACK, 5000, 1001, 0)),
            (true, seg(tcp::ACK, 1001, 5001, 0)),
            (true, seg(tcp::ACK, 1001, 5001, 10)),
            (false, seg(tcp::ACK, 5001, 1011, 0)),
            (false, seg(tcp::ACK, 5001, 1011, 10)),
        ]
    }

    /// The steady path changes a state exactly as Zeek's whole sequence of steps does, on
    /// random sequences of segments (and it is taken on many of them).
    #[test]
    fn the_steady_path_equals_the_whole() {
        use proptest::test_runner::{Config, TestRunner};
        let steady = std::cell::Cell::new(0u32);
        let mut runner = TestRunner::new(Config::with_cases(4000));
        runner
            .run(
                &(any::<bool>(), prop::collection::vec(segment(), 1..60)),
                |(opened, rest)| {
                    let (mut fast, mut whole) = (TcpState::new(), TcpState::new());
                    // Mostly after a handshake and data both ways (where the steady path starts),
                    // sometimes from nothing.
                    let segs: Vec<(bool, TcpSegment)> = if opened {
                        handshake().into_iter().chain(rest).collect()
                    } else {
                        rest
                    };
                    for (fwd, seg) in &segs {
                        let dir = if *fwd {
                            Direction::Forward
                        } else {
                            Direction::Reverse
                        };
                        let before = fast;
                        if fast.observe_steady(dir, seg) {
                            steady.set(steady.get() + 1);
                        } else {
                            prop_assert_eq!(fast, before, "a refused segment changed nothing");
                            fast.observe_any(dir, seg);
                        }
                        whole.observe_any(dir, seg);
                        prop_assert_eq!(fast, whole, "after {:?}", seg);
                    }
                    Ok(())
                },
            )
            .unwrap();
        assert!(
            steady.get() > 1000,
            "the steady path taken {} times",
            steady.get()
        );
    }

    /// The steady path is taken: a connection's data and ACKs after its handshake.
    #[test]
    fn an_established_connection_takes_the_steady_path() {
        let seg = |flags: u8, seq: u32, ack: u32, len: u32| TcpSegment {
            flags,
            seq,
            ack,
            payload_len: len,
            window: 1000,
        };
        let (f, r) = (Direction::Forward, Direction::Reverse);
        let mut t = TcpState::new();
        t.observe(f, &seg(tcp::SYN, 100, 0, 0));
        t.observe(r, &seg(tcp::SYN | tcp::ACK, 900, 101, 0));
        t.observe(f, &seg(tcp::ACK, 101, 901, 0));
        t.observe(f, &seg(tcp::ACK, 101, 901, 10));
        t.observe(r, &seg(tcp::ACK, 901, 111, 0));
        t.observe(r, &seg(tcp::ACK, 901, 111, 20));
        t.observe(f, &seg(tcp::ACK, 111, 921, 0));
        let mut taken = 0;
        for i in 0..10 {
            let before = t;
            taken += u32::from(t.observe_steady(f, &seg(tcp::ACK, 111 + i * 10, 921, 10)));
            let mut whole = before;
            whole.observe_any(f, &seg(tcp::ACK, 111 + i * 10, 921, 10));
            assert_eq!(t, whole);
        }
        assert_eq!(taken, 10);
        assert_eq!(t.history(), "ShADad");
        assert_eq!(t.conn_state(), ConnState::S1);
    }
}
