//! zcrx: zero-copy packet receive on Linux.
//!
//! This facade re-exports the workspace crates:
//! - [`ring`]: the TPACKET_V3 receive ring, TX ring, leases and synthetic ring;
//! - [`flowcache`]: 5-tuple extraction and the flow table;
//! - [`capture`]: the stage / consumer pipeline, copy routines, pcap/pcapng files;
//! - [`kflows`]: flows counted in the kernel's receive path by an eBPF program.

// docs.rs (`--cfg docsrs`, nightly): mark what a feature gates.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's code blocks are compiled as doctests, so what it shows keeps working.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use zcrx_capture as capture;
pub use zcrx_flowcache as flowcache;
pub use zcrx_kflows as kflows;
pub use zcrx_ring as ring;
