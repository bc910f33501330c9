//! The main benchmark: identical UDP traffic over N flows, received by each mode in turn,
//! in a netns lab (namespace a sends, namespace b receives).
//!
//! - `mode`: the receive modes; `schema`: the settings and results a run writes.
//! - `bench`: [`Bench`], the lab, the generator and the flows kept across modes.
//! - `measure`: one mode at one size; `trial`: one capacity trial at an offered rate.
//! - `receivers`: what each mode receives with, and its threads: `sockets`, `uring`, `xdp`,
//!   `pnet`, `ring` (the pipeline); `tally`: the receivers' counters.
//! - `drops`: the kernel's drop counters around a mode.
//! - `sniff`, `latency`, `print`: an external sniffer (zcap, tcpdump) on the same traffic,
//!   its CPU, its latency, and its CPU and drops while printing its lines; `text`, `plot`: the main run's table and plots.

mod bench;
mod drops;
mod latency;
mod measure;
mod mode;
pub mod plot;
mod pnet;
mod print;
mod receivers;
mod ring;
mod schema;
mod sniff;
mod sockets;
mod tally;
pub mod text;
mod trial;
mod uring;
mod xdp;

pub use bench::Bench;
pub use latency::{text as sniff_latency_text, SniffLatency};
pub use mode::Mode;
pub use print::{text as sniff_print_text, SniffPrint};
pub use schema::{Drops, Latency, ModeResult, Ratio, RunConfig, Skipped, Trial};
pub use sniff::{text as sniff_text, SniffResult, SnifferSpec, IFACE};
