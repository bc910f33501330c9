//! A scrape's text: the sample as OpenMetrics families (prometheus-client), and as the
//! older Prometheus text format for clients that do not ask for OpenMetrics.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{SystemTime, UNIX_EPOCH};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use super::sample::{FlowSample, Sample, ShardSample, EVENTS};

/// A family's type.
#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
}

/// A sample and the time the capture started, encoded on each scrape.
#[derive(Debug)]
struct Scrape {
    sample: Sample,
    start_s: f64,
}

impl Collector for Scrape {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> fmt::Result {
        let all = [self.totals(), self.flows(), self.events()];
        for (name, help, unit, kind, value) in all.into_iter().flatten() {
            family(&mut e, name, help, unit, kind, &[(None, value)])?;
        }
        let mut dropped = vec![(
            Some(("cause", "compressor")),
            EVENTS.compressor_dropped.load(Relaxed) as f64,
        )];
        if let Some(p) = self.sample.pcap_over_ip {
            dropped.push((Some(("cause", "pcap_over_ip")), p.dropped as f64));
        }
        family(
            &mut e,
            "zcap_dropped_packets",
            "Packets zcap dropped itself, by where: a compressor's writer had no room (in no file), or the PCAP-over-IP server fell behind (sent to no client).",
            None,
            Kind::Counter,
            &dropped,
        )?;
        self.rejections(&mut e)?;
        self.shards(&mut e)
    }
}

/// A family of one value without labels: name (without `_total`), help, unit, type, value.
type Single = (&'static str, &'static str, Option<Unit>, Kind, f64);

impl Scrape {
    /// The capture's start and its totals over the shards.
    fn totals(&self) -> Vec<Single> {
        use Kind::{Counter as C, Gauge as G};
        let s = &self.sample;
        let sum = |f: fn(&ShardSample) -> u64| s.shards.iter().map(f).sum::<u64>() as f64;
        vec![
            (
                "zcap_start_time_seconds",
                "When the capture started, in seconds since the Unix epoch.",
                None,
                G,
                self.start_s,
            ),
            (
                "zcap_received_packets",
                "Packets that passed the filter, as the kernel counts them (captured or dropped).",
                None,
                C,
                sum(|x| x.received),
            ),
            (
                "zcap_captured_packets",
                "Packets written, printed or counted.",
                None,
                C,
                s.captured as f64,
            ),
            (
                "zcap_kernel_dropped_packets",
                "Packets the kernel dropped for want of room in a ring.",
                None,
                C,
                sum(|x| x.kernel_dropped),
            ),
            (
                "zcap_ring_freezes",
                "Times the kernel froze a ring's queue (its next block still held).",
                None,
                C,
                sum(|x| x.freezes),
            ),
            (
                "zcap_captured",
                "Wire bytes of the packets captured.",
                Some(Unit::Bytes),
                C,
                s.captured_bytes as f64,
            ),
            (
                "zcap_ring_blocks_held",
                "Ring blocks zcap holds now (withheld from the kernel).",
                None,
                G,
                sum(|x| x.blocks_held),
            ),
            (
                "zcap_ring_blocks",
                "Ring blocks in all.",
                None,
                G,
                sum(|x| x.blocks),
            ),
        ]
    }

    /// The flow tables' sums (none when flows are not tracked).
    fn flows(&self) -> Vec<Single> {
        use Kind::{Counter as C, Gauge as G};
        let tables: Vec<FlowSample> = self.sample.shards.iter().filter_map(|x| x.flows).collect();
        if tables.is_empty() {
            return Vec::new();
        }
        let sum = |f: fn(&FlowSample) -> u64| tables.iter().map(f).sum::<u64>() as f64;
        vec![
            (
                "zcap_flows_active",
                "Flows in the tables (at their last tick).",
                None,
                G,
                sum(|f| f.active),
            ),
            (
                "zcap_flows_created",
                "Flows created.",
                None,
                C,
                sum(|f| f.created),
            ),
            (
                "zcap_flows_evicted",
                "Flows evicted to make room for new ones.",
                None,
                C,
                sum(|f| f.evicted),
            ),
            (
                "zcap_flows_expired",
                "Flows ended by their idle timeout or after FIN/RST.",
                None,
                C,
                sum(|f| f.expired),
            ),
            (
                "zcap_flows_lost",
                "Flows evicted whose record was lost: the flow table had no room to queue it.",
                None,
                C,
                sum(|f| f.lost),
            ),
        ]
    }

    /// IPFIX, files and hooks (the counts of [`EVENTS`]), PCAP-over-IP: each when in use.
    fn events(&self) -> Vec<Single> {
        use Kind::{Counter as C, Gauge as G};
        let (s, ev) = (&self.sample, &EVENTS);
        let n = |c: &AtomicU64| c.load(Relaxed) as f64;
        let mut out = Vec::new();
        if s.ipfix {
            out.extend([
                (
                    "zcap_ipfix_messages_sent",
                    "IPFIX messages every destination took.",
                    None,
                    C,
                    n(&ev.ipfix_messages_sent),
                ),
                (
                    "zcap_ipfix_records_sent",
                    "Flow records in the IPFIX messages sent.",
                    None,
                    C,
                    n(&ev.ipfix_records_sent),
                ),
                (
                    "zcap_ipfix_messages_failed",
                    "IPFIX messages a destination refused (a send error, a failed write).",
                    None,
                    C,
                    n(&ev.ipfix_messages_failed),
                ),
                (
                    "zcap_ipfix_records_failed",
                    "Flow records in the IPFIX messages that failed.",
                    None,
                    C,
                    n(&ev.ipfix_records_failed),
                ),
            ]);
        }
        if s.files {
            out.extend([
                ("zcap_written", "Bytes written to capture files or standard output (compressed bytes for a compressed file).", Some(Unit::Bytes), C, n(&ev.written_bytes)),
                ("zcap_files_written", "Capture files created (the one being written included).", None, C, n(&ev.files)),
                ("zcap_hooks_run", "-z commands started.", None, C, n(&ev.hooks_run)),
                ("zcap_hooks_failed", "-z commands that could not start or ended in failure.", None, C, n(&ev.hooks_failed)),
            ]);
        }
        if let Some(k) = s.kafka {
            let c = |v: u64| v as f64;
            out.extend([
                ("zcap_kafka_records_published", "Flow records a Kafka broker acknowledged.", None, C, c(k.published)),
                ("zcap_kafka_records_not_delivered", "Flow records a broker refused, or none took within message.timeout.ms.", None, C, c(k.failed)),
                ("zcap_kafka_records_queue_full", "Flow records dropped: the Kafka client's bounded queue was full (brokers away or behind).", None, C, c(k.queue_full)),
                ("zcap_kafka_records_too_large", "Flow records dropped: larger than the topic takes.", None, C, c(k.too_large)),
                ("zcap_kafka_records_relay_behind", "Flow records the capture dropped: the relay to Kafka was behind or gone.", None, C, c(k.pair_full)),
                ("zcap_kafka_records_waiting", "Flow records held for a broker now.", None, G, c(k.waiting)),
            ]);
        }
        if let Some(p) = s.pcap_over_ip {
            out.extend([
                (
                    "zcap_pcap_over_ip_clients",
                    "PCAP-over-IP clients connected now.",
                    None,
                    G,
                    p.clients as f64,
                ),
                (
                    "zcap_pcap_over_ip_clients_cut_off",
                    "PCAP-over-IP clients cut off for reading too slowly.",
                    None,
                    C,
                    p.cut_off as f64,
                ),
            ]);
        }
        out
    }

    /// The endpoints' refused connections, labelled `reason`.
    fn rejections(&self, e: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let labelled = |r: &[(&'static str, u64)]| -> Vec<(Label<'static>, f64)> {
            r.iter()
                .map(|&(reason, n)| (Some(("reason", reason)), n as f64))
                .collect()
        };
        if let Some(p) = self.sample.pcap_over_ip {
            family(
                e,
                "zcap_pcap_over_ip_rejected_connections",
                "PCAP-over-IP connections closed unserved: from an address --pcap-over-ip-allow does not allow, over --pcap-over-ip-max-connections, or failing the TLS handshake (in time).",
                None,
                Kind::Counter,
                &labelled(&p.rejected),
            )?;
        }
        if !self.sample.metrics_rejected.is_empty() {
            family(
                e,
                "zcap_metrics_rejected_connections",
                "Metrics connections answered without metrics or closed: from outside --metrics-allow, over --metrics-max-connections or one address' share, displaced before proving anything, a failed TLS handshake, too slow, a request head too large, a bad request, no valid credentials.",
                None,
                Kind::Counter,
                &labelled(&self.sample.metrics_rejected),
            )?;
        }
        Ok(())
    }

    /// The per-shard families, labelled `shard`.
    fn shards(&self, e: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let s = &self.sample.shards;
        let labels: Vec<String> = (0..s.len()).map(|i| i.to_string()).collect();
        let per = |f: &dyn Fn(&ShardSample) -> Option<u64>| -> Vec<(Label<'_>, f64)> {
            s.iter()
                .zip(&labels)
                .filter_map(|(x, l)| f(x).map(|v| (Some(("shard", l.as_str())), v as f64)))
                .collect()
        };
        type Of = fn(&ShardSample) -> Option<u64>;
        let families: [(&str, &str, Kind, Of); 9] = [
            (
                "zcap_shard_received_packets",
                "Packets that passed the filter into this shard's ring.",
                Kind::Counter,
                |x| Some(x.received),
            ),
            (
                "zcap_shard_captured_packets",
                "Packets this shard handed to the output.",
                Kind::Counter,
                |x| Some(x.captured),
            ),
            (
                "zcap_shard_kernel_dropped_packets",
                "Packets the kernel dropped for want of room in this shard's ring.",
                Kind::Counter,
                |x| Some(x.kernel_dropped),
            ),
            (
                "zcap_shard_ring_freezes",
                "Times the kernel froze this shard's queue.",
                Kind::Counter,
                |x| Some(x.freezes),
            ),
            (
                "zcap_shard_ring_blocks_held",
                "Blocks of this shard's ring zcap holds now.",
                Kind::Gauge,
                |x| Some(x.blocks_held),
            ),
            (
                "zcap_shard_flows_active",
                "Flows in this shard's table (at its last tick).",
                Kind::Gauge,
                |x| x.flows.map(|f| f.active),
            ),
            (
                "zcap_shard_flows_created",
                "Flows this shard created.",
                Kind::Counter,
                |x| x.flows.map(|f| f.created),
            ),
            (
                "zcap_shard_flows_evicted",
                "Flows this shard evicted.",
                Kind::Counter,
                |x| x.flows.map(|f| f.evicted),
            ),
            (
                "zcap_shard_flows_expired",
                "Flows of this shard ended by a timeout or after FIN/RST.",
                Kind::Counter,
                |x| x.flows.map(|f| f.expired),
            ),
        ];
        for (name, help, kind, f) in families {
            let values = per(&f);
            if !values.is_empty() {
                family(e, name, help, None, kind, &values)?;
            }
        }
        Ok(())
    }
}

/// A label (name, value) of one value of a family, if it has one.
type Label<'a> = Option<(&'a str, &'a str)>;

/// One family: its descriptor, then its values, each with its label (or none).
fn family(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    kind: Kind,
    values: &[(Label<'_>, f64)],
) -> fmt::Result {
    let metric_type = match kind {
        Kind::Counter => ConstCounter::new(0u64).metric_type(),
        Kind::Gauge => ConstGauge::new(0i64).metric_type(),
    };
    let mut d = e.encode_descriptor(name, help, unit.as_ref(), metric_type)?;
    for &(l, v) in values {
        let encode = |m| match kind {
            // Counters here are whole numbers; gauges may not be (the start time).
            Kind::Counter => ConstCounter::new(v as u64).encode(m),
            Kind::Gauge if v.fract() == 0.0 && v.abs() < 9e15 => {
                ConstGauge::new(v as i64).encode(m)
            }
            Kind::Gauge => ConstGauge::new(v).encode(m),
        };
        match l {
            Some(l) => encode(d.encode_family(&[l])?)?,
            None => encode(d.encode_family(&(&[] as &[(&str, &str)]))?)?,
        }
    }
    Ok(())
}

/// The text a scrape gets for `sample`.
pub(super) fn encode(sample: Sample, start: SystemTime) -> String {
    let start_s = start
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape { sample, start_s }));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .expect("writing to a String cannot fail");
    text
}

/// OpenMetrics text as the older Prometheus text format (0.0.4) has it: a counter's HELP
/// and TYPE lines name its samples (`_total` included), no UNIT lines, no `# EOF`.
pub(super) fn classic(openmetrics: &str) -> String {
    let counters: Vec<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 16 * counters.len());
    for line in openmetrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let mut words = line.splitn(4, ' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("#"), Some(kind @ ("HELP" | "TYPE")), Some(name), rest)
                if counters.contains(&name) =>
            {
                out.push_str(&format!("# {kind} {name}_total"));
                if let Some(rest) = rest {
                    out.push(' ');
                    out.push_str(rest);
                }
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::metrics::sample::ServedSample;
    use std::time::Duration;

    fn sample() -> Sample {
        Sample {
            shards: vec![
                ShardSample {
                    received: 10,
                    captured: 9,
                    kernel_dropped: 1,
                    blocks: 64,
                    blocks_held: 1,
                    flows: Some(FlowSample {
                        active: 3,
                        created: 5,
                        evicted: 1,
                        expired: 1,
                        lost: 2,
                    }),
                    ..Default::default()
                },
                ShardSample {
                    received: 20,
                    captured: 20,
                    blocks: 64,
                    flows: Some(FlowSample {
                        active: 2,
                        created: 2,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ],
            captured: 29,
            captured_bytes: 2900,
            pcap_over_ip: Some(ServedSample {
                clients: 1,
                cut_off: 0,
                dropped: 0,
                rejected: [
                    ("address", 2),
                    ("connection_limit", 0),
                    ("tls_handshake", 1),
                    ("address_limit", 0),
                    ("displaced", 0),
                ],
            }),
            metrics_rejected: vec![("connection_limit", 3), ("unauthorized", 4)],
            ipfix: true,
            files: true,
            kafka: Some(crate::kafka::Counts {
                published: 7,
                queue_full: 2,
                waiting: 1,
                ..Default::default()
            }),
        }
    }

    /// Totals are the shards' sums, counters end in `_total`, units in the name, shards as
    /// labels; the text ends as OpenMetrics requires.
    #[test]
    fn the_text_names_totals_and_shards() {
        let text = encode(sample(), UNIX_EPOCH + Duration::from_secs(1_700_000_000));
        let has = |line: &str| {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in:\n{text}"
            )
        };
        has("# TYPE zcap_received_packets counter");
        has("zcap_received_packets_total 30");
        has("zcap_captured_packets_total 29");
        has("zcap_kernel_dropped_packets_total 1");
        has("# UNIT zcap_captured_bytes bytes");
        has("zcap_captured_bytes_total 2900");
        has("zcap_start_time_seconds 1700000000");
        has("zcap_flows_active 5");
        has("zcap_flows_created_total 7");
        has("zcap_flows_lost_total 2");
        has("zcap_shard_received_packets_total{shard=\"1\"} 20");
        has("zcap_shard_flows_evicted_total{shard=\"0\"} 1");
        has("zcap_ring_blocks 128");
        // A process-wide count, which the compressor's own tests move as they run beside.
        assert!(
            text.contains("zcap_dropped_packets_total{cause=\"compressor\"} "),
            "{text}"
        );
        has("zcap_dropped_packets_total{cause=\"pcap_over_ip\"} 0");
        has("zcap_pcap_over_ip_clients 1");
        has("zcap_pcap_over_ip_rejected_connections_total{reason=\"address\"} 2");
        has("zcap_pcap_over_ip_rejected_connections_total{reason=\"tls_handshake\"} 1");
        has("zcap_metrics_rejected_connections_total{reason=\"unauthorized\"} 4");
        assert!(text.contains("zcap_ipfix_records_sent_total "));
        assert!(text.contains("zcap_written_bytes_total "));
        has("zcap_kafka_records_published_total 7");
        has("zcap_kafka_records_queue_full_total 2");
        has("zcap_kafka_records_waiting 1");
        assert!(text.ends_with("# EOF\n"), "{text}");
        // The older format for clients that do not ask for OpenMetrics.
        let old = classic(&text);
        for line in [
            "# TYPE zcap_received_packets_total counter",
            "# HELP zcap_captured_bytes_total Wire bytes of the packets captured.",
            "zcap_captured_bytes_total 2900",
            "# TYPE zcap_ring_blocks gauge",
        ] {
            assert!(old.lines().any(|l| l == line), "no {line:?} in:\n{old}");
        }
        assert!(!old.contains("# UNIT") && !old.contains("# EOF"), "{old}");
    }

    /// Families that do not apply are left out, not shown as zeros.
    #[test]
    fn what_is_off_is_absent() {
        let mut s = sample();
        s.shards.iter_mut().for_each(|x| x.flows = None);
        s.ipfix = false;
        s.files = false;
        s.pcap_over_ip = None;
        s.metrics_rejected = Vec::new();
        s.kafka = None;
        let text = encode(s, UNIX_EPOCH);
        for absent in [
            "zcap_flows",
            "zcap_shard_flows",
            "ipfix",
            "zcap_written",
            "pcap_over_ip",
            "rejected",
            "kafka",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }
}
