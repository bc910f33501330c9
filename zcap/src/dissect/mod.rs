//! The parts of tcpdump 4.99's output zcap reproduces beyond the basic `-n -q` line, one
//! file per layer: the link-level header (`-e`) and ARP (`link`), the IP header details and
//! checksum notes of `-v` (`ipv4`, `ipv6` with its extension headers), ICMP and ICMPv6
//! summaries (`icmp`), and the payload dumps of `-x`, `-xx`, `-X`, `-XX` and `-A`
//! (`dump`). Written from tcpdump's documented output formats and checked line by line
//! against tcpdump in the tests. What the layers share (reading fields, protocol names, the
//! Internet checksum) is in `field`, below them all.

pub mod app;
mod dump;
pub(crate) mod field;
mod icmp;
mod icmp6;
mod ipv4;
mod ipv6;
pub(crate) mod layout;
mod link;
pub mod lldp;
mod mptcp;
pub mod net;
pub(crate) mod num;
pub mod resolve;
pub mod sctp;
pub mod stp;
pub mod tcp;
pub mod tcp_seq;

pub use dump::{ascii, hex};
pub use icmp::icmp;
pub use icmp6::{icmp6, Style as Icmp6Style};
pub use ipv4::{ipv4_verbose, udp4_sum_note};
use ipv6::v6_sum;
pub use ipv6::{ipv6_ext, ipv6_verbose, udp6_sum_note};
pub use link::{dump_offset, ether_prefix, ethertype_words, link_header_len};
