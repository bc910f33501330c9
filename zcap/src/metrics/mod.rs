//! `--metrics [ADDR:]PORT`: the capture's counters over HTTP or HTTPS in the OpenMetrics
//! text format (which Prometheus scrapes), encoded by `prometheus-client`, served by a small
//! HTTP/1.1 server of zcap's own ([`serve`], [`http`]) with TLS and basic authentication
//! from an exporter-toolkit web configuration ([`web_config`], [`auth`]).
//!
//! Nothing here touches a packet. A scrape reads what the capture already publishes — the
//! rings' kernel counters (`PACKET_STATISTICS`, accumulated), the blocks zcap holds, the
//! captured count the status line reads, each shard's flow table counters as of its last
//! tick (at most a second old) — and [`EVENTS`] ([`sample`]), the counts of rare events bumped where they
//! happen (a file created, a write(2) to it, an IPFIX message, a `-z` hook). So a scrape
//! costs the capture nothing, and a scraper that misbehaves costs it nothing either: the
//! server runs on threads of its own, as many as `--metrics-max-connections` at most, each
//! connection bounded in time and size ([`http`]), and a port that is taken does not stop
//! the capture — zcap says so and tries again every [`serve::REBIND_EVERY`].
//!
//! Names follow Prometheus' conventions: a `zcap_` prefix, counters ending in `_total`, base
//! units (bytes, seconds). Totals and per-shard values are separate families
//! (`zcap_received_packets_total` and `zcap_shard_received_packets_total{shard="0"}`), so
//! that summing a family never counts a packet twice.

mod auth;
mod encode;
mod http;
mod sample;
mod serve;
mod web_config;

pub(crate) use auth::BasicAuth;
pub(crate) use http::{per_address, share_of};
pub(crate) use sample::{add, FlowSample, Sample, ServedSample, ShardSample, EVENTS};
pub(crate) use serve::{listen, Listening, ServeConfig};
pub(crate) use web_config::WebConfig;
