//! `--metrics ADDR:PORT`: the capture's counters over HTTP in the OpenMetrics text format
//! (which Prometheus scrapes), encoded by `prometheus-client`, served by `tiny_http`.
//!
//! Nothing here touches a packet. A scrape reads what the capture already publishes — the
//! rings' kernel counters (`PACKET_STATISTICS`, accumulated), the blocks zcap holds, the
//! captured count the status line reads, each shard's flow table counters as of its last
//! tick (at most a second old) — and [`EVENTS`] ([`sample`]), the counts of rare events bumped where they
//! happen (a file created, a write(2) to it, an IPFIX message, a `-z` hook). So a scrape
//! costs the capture nothing, and a scraper that misbehaves costs it nothing either: the
//! server runs on a thread of its own, an answer to a client that never reads gives up after
//! [`serve::IO_TIMEOUT`], and a port that is taken does not stop the capture — zcap says so and
//! tries again every [`serve::REBIND_EVERY`] (as it does if the server's accept loop ever fails).
//!
//! Names follow Prometheus' conventions: a `zcap_` prefix, counters ending in `_total`, base
//! units (bytes, seconds). Totals and per-shard values are separate families
//! (`zcap_received_packets_total` and `zcap_shard_received_packets_total{shard="0"}`), so
//! that summing a family never counts a packet twice.

mod encode;
mod sample;
mod serve;

pub(crate) use sample::{add, FlowSample, Sample, ServedSample, ShardSample, EVENTS};
pub(crate) use serve::{listen, Listening};
