//! Where packets go (a pcap/pcapng file, standard output, text or JSON lines, nowhere) and
//! how many went: [`sink`] is what a capture writes to and how it is opened, [`state`] the
//! sink and its counters behind one lock with the per-packet paths and the final flush
//! that keeps a file valid after a write error, [`writer`] the consumer that writes a
//! shard's packets.

mod sink;
mod state;
mod writer;

pub(crate) use sink::{open_sink, Destination, SinkConfig, TextStyle};
pub(crate) use state::{close, Output};
pub(crate) use writer::Writer;
