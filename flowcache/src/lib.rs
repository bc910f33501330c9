//! zcrx-flowcache: header-only 5-tuple extraction and a bounded, keyed, symmetric flow table.
//!
//! - [`extract`] reads a frame's link, network and transport headers — nothing past the L4
//!   header — and returns its [`FlowKey`] (or an [`ExtractError`]; no input panics).
//! - [`FlowTable`] accounts packets per flow and direction in fixed, preallocated memory,
//!   with idle and active timeouts, eviction that emits a [`FlowRecord`], and stable
//!   [`FlowId`]s.
//! - [`wire`] holds zero-copy views of the headers extraction reads (Ethernet, VLAN, IPv4,
//!   IPv6 and its extension headers, TCP, UDP, SCTP, DCCP, ICMP), for any parser of the same
//!   headers (zcap's dissector reads through them).
//! - [`FlowKey::community_id`] gives a flow's Community ID v1, the ID Zeek, Suricata and
//!   other tools give the same flow.
//! - [`TcpState`] follows a TCP connection's state and history in Zeek's vocabulary
//!   (conn.log's `conn_state` and `history`); a table built with
//!   [`FlowTableConfig::with_tcp_state`] holds one per flow and hands it out with the flow's
//!   record ([`FlowEnd`]).
//! - [`ipfix`] encodes flow records as IPFIX messages (RFC 7011, biflows per RFC 5103) for a
//!   collector, and reads them back.
//! - [`names`] (feature `names`, off by default) reads what a flow is from the first payload
//!   bytes of each direction: TLS and QUIC server names, ALPN and JA4, DNS questions, HTTP/1.x
//!   requests, with a bounded per-flow reassembly.
//!
//! No unsafe code, no dependency on the rest of zcrx.
//!
//! Feeding a pcap file through both and printing the top flows:
//!
//! ```
//! use zcrx_flowcache::{extract, FlowTable, LinkType};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let path = std::env::temp_dir().join(format!("zcrx-flowcache-doc-{}.pcap", std::process::id()));
//! # {
//! #     let mut w = pcap_file::pcap::PcapWriter::new(std::fs::File::create(&path)?)?;
//! #     let f = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 20);
//! #     for i in 0..3u64 {
//! #         w.write_packet(&pcap_file::pcap::PcapPacket::new(std::time::Duration::from_millis(i), f.len() as u32, &f))?;
//! #     }
//! # }
//! let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&path)?)?;
//! let link = LinkType::from_linktype(reader.header().datalink.into()).ok_or("unsupported link type")?;
//! let mut table = FlowTable::with_capacity(4096)?;
//! let mut finished = Vec::new();
//! while let Some(packet) = reader.next_packet() {
//!     let packet = packet?;
//!     let Ok(x) = extract(link, &packet.data, None) else { continue }; // not IP, or malformed
//!     let t = table.track(x.track_input(x.ip_octets(packet.orig_len), packet.timestamp.as_nanos() as u64));
//!     if t.evicted {
//!         finished.extend(table.drain_evicted()); // the flow that made room for this one
//!     }
//! }
//! // Keys are canonical (both directions one entry): `oriented` shows the initiator first.
//! let mut flows: Vec<_> = table.flush().chain(finished).map(|r| r.stats.oriented()).collect();
//! flows.sort_by_key(|s| std::cmp::Reverse(s.total_bytes()));
//! for s in flows.iter().take(10) {
//!     println!("{:<50} {:>8} pkts {:>10} bytes", s.key.to_string(), s.total_packets(), s.total_bytes());
//! }
//! assert_eq!(flows[0].total_packets(), 3);
//! # std::fs::remove_file(&path)?;
//! # Ok(()) }
//! ```
// docs.rs (`--cfg docsrs`, nightly): mark what a feature gates.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The crate README's code is compiled as a doctest, so what it shows keeps working.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod community_id;
mod extract;
pub mod ipfix;
mod key;
#[cfg(feature = "names")]
pub mod names;
pub mod proto;
mod record;
mod table;
pub mod tcp_state;
#[cfg(feature = "test-support")]
pub mod testdata;
pub mod wire;

pub use community_id::{BadCommunityId, CommunityId};
pub use extract::{
    extract, extract_fast, extract_general, ExtractError, Extracted, Fragment, Layer, LinkType,
    MAX_EXT_HEADERS, MAX_VLAN_TAGS,
};
pub use key::{proto_name, proto_number, Direction, FlowKey};
pub use proto::ipproto;
pub use record::{
    tcp, EndReason, FlowId, FlowRecord, FlowStats, FlowTag, Timeouts, TrackInput, Tracked,
    UnknownName, MAX_CAPACITY,
};
pub use table::{
    EvictedRecords, FlowEnd, FlowTable, FlowTableConfig, FlowTableError, TableCounters,
    DEFAULT_EVICTED_ROOM, TCP_STATE_BYTES,
};
pub use tcp_state::{ConnState, TcpSegment, TcpState};
