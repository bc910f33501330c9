//! The measurements, each with its own text and plots: `run` (the receive modes, the
//! receivers, a trial), `micro` (copy, memcmp, remap, ring drain), `instructions`
//! (callgrind), `table` (the flow table against hashbrown), then `sweep` and `capacity` (built
//! on `run` and the lab's generators), `tcp_rx` (TCP receive: copies against remap) and
//! `print_file` (zcap and tcpdump printing a capture file).

pub mod capacity;
pub mod instructions;
pub mod micro;
pub mod print_file;
pub mod run;
pub mod sweep;
pub mod table;
pub mod tcp_rx;
