//! A TCP connection's state and history in Zeek's vocabulary (conn.log's `conn_state` and
//! `history`), from each segment's header alone: flags, sequence and acknowledgement numbers,
//! payload length, window.
//!
//! [`TcpState`] follows each endpoint through the states Zeek's TCP analyzer gives it
//! (inactive, SYN sent, SYN-ACK sent, partial, established, closed, reset) by the same
//! transitions, and derives `conn_state` from the two as Zeek's `Conn::conn_state` does:
//!
//! | state | meaning (Zeek's documentation) |
//! |---|---|
//! | S0 | connection attempt seen, no reply |
//! | S1 | connection established, not terminated |
//! | SF | normal establishment and termination |
//! | REJ | connection attempt rejected |
//! | S2 | established, close attempt by the originator seen (no reply from the responder) |
//! | S3 | established, close attempt by the responder seen (no reply from the originator) |
//! | RSTO | established, the originator aborted (sent a RST) |
//! | RSTR | the responder sent a RST |
//! | RSTOS0 | the originator sent a SYN then a RST; no SYN-ACK from the responder seen |
//! | RSTRH | the responder sent a SYN-ACK then a RST; no SYN from the originator seen |
//! | SH | the originator sent a SYN then a FIN; no SYN-ACK from the responder seen |
//! | SHR | the responder sent a SYN-ACK then a FIN; no SYN from the originator seen |
//! | OTH | no SYN seen, just midstream traffic |
//!
//! The history: one letter per event, upper case when the originator sent it, lower case
//! for the responder: `s` a SYN without ACK, `h` a SYN-ACK, `a` a pure ACK, `d` a segment
//! with payload, `f` a FIN, `r` a RST, `t` a retransmitted payload, `w` a zero window, `i` a
//! FIN+RST, `q` a SYN+FIN or SYN+RST. `a`, `d`, `i` and `q` are recorded at most once a
//! direction; `s`, `h`, `f` and `r` again when their sequence number differs from the last
//! one of the same letter and direction; `t` and `w` at the 1st, 10th, 100th, ...
//! occurrence. The letters that need what a header-only view does not have are not written:
//! `c` (checksums are not verified), `g` (content gaps need reassembly), `x`.
//!
//! The originator is the sender of the first segment seen (the flow table's initiator), but
//! for a connection first seen at its SYN-ACK, whose sender is the responder (what Zeek's
//! port heuristic makes of a SYN-ACK from a server port, and what RSTRH and SHR describe).
//! Zeek's other role swaps (by well-known server ports for segments without SYN, and the
//! `^` it marks them with) are not made. The history keeps its first [`HISTORY_MAX`]
//! letters.
//!
//! Memory: [`TcpState`] is 92 bytes a flow (`size_of`, tested). A flow table built with
//! [`FlowTableConfig::with_tcp_state`](crate::FlowTableConfig::with_tcp_state) holds one per
//! slot beside its slots ([`TCP_STATE_BYTES`](crate::TCP_STATE_BYTES)), moved by [`FlowTable::observe_tcp`](crate::FlowTable::observe_tcp) and handed
//! out with the flow's record ([`FlowEnd`](crate::FlowEnd)); a table without them costs
//! nothing more, and [`FlowTable::track`](crate::FlowTable::track) is the same either way.

mod conn_state;
mod endpoint;
mod segment;
mod state;

pub use conn_state::ConnState;
pub use segment::TcpSegment;
pub use state::{TcpState, HISTORY_MAX};
