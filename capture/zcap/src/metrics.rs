//! `--metrics ADDR:PORT`: the capture's counters over HTTP in the OpenMetrics text format
//! (which Prometheus scrapes), encoded by `prometheus-client`, served by `tiny_http`.
//!
//! Nothing here touches a packet. A scrape reads what the capture already publishes — the
//! rings' kernel counters (`PACKET_STATISTICS`, accumulated), the blocks zcap holds, the
//! captured count the status line reads, each shard's flow table counters as of its last
//! tick (at most a second old) — and [`EVENTS`], the counts of rare events bumped where they
//! happen (a file created, a write(2) to it, an IPFIX message, a `-z` hook). So a scrape
//! costs the capture nothing, and a scraper that misbehaves costs it nothing either: the
//! server runs on a thread of its own, an answer to a client that never reads gives up after
//! [`IO_TIMEOUT`], and a port that is taken does not stop the capture — zcap says so and
//! tries again every [`REBIND_EVERY`] (as it does if the server's accept loop ever fails).
//!
//! Names follow Prometheus' conventions: a `zcap_` prefix, counters ending in `_total`, base
//! units (bytes, seconds). Totals and per-shard values are separate families
//! (`zcap_received_packets_total` and `zcap_shard_received_packets_total{shard="0"}`), so
//! that summing a family never counts a packet twice.

use std::fmt;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::Scope;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Result};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

/// A scraper's socket gives up on a read or a write after this long.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a taken port is tried again.
pub(crate) const REBIND_EVERY: Duration = Duration::from_secs(1);

/// The OpenMetrics content type (Prometheus asks for it).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The older Prometheus text format, for clients that do not ask for OpenMetrics (curl,
/// `promtool check metrics`, scripts).
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Counts of rare events, bumped where they happen. One zcap process runs one capture, so
/// one set of counters serves it.
pub(crate) struct Events {
    /// Bytes written (write(2) and writev(2)) to capture files or standard output; for a
    /// compressed file, the compressed bytes.
    pub(crate) written_bytes: AtomicU64,
    /// Capture files created (the one being written included).
    pub(crate) files: AtomicU64,
    /// `-z` commands started, and those that could not start or ended in failure.
    pub(crate) hooks_run: AtomicU64,
    pub(crate) hooks_failed: AtomicU64,
    /// Packets a compressor's writer had no room for (in no file).
    pub(crate) compressor_dropped: AtomicU64,
    /// IPFIX messages (and the flow records in them) that every destination took, and those
    /// that a destination refused (a send error, a failed file write).
    pub(crate) ipfix_messages_sent: AtomicU64,
    pub(crate) ipfix_records_sent: AtomicU64,
    pub(crate) ipfix_messages_failed: AtomicU64,
    pub(crate) ipfix_records_failed: AtomicU64,
}

/// The process' event counts.
pub(crate) static EVENTS: Events = Events {
    written_bytes: AtomicU64::new(0),
    files: AtomicU64::new(0),
    hooks_run: AtomicU64::new(0),
    hooks_failed: AtomicU64::new(0),
    compressor_dropped: AtomicU64::new(0),
    ipfix_messages_sent: AtomicU64::new(0),
    ipfix_records_sent: AtomicU64::new(0),
    ipfix_messages_failed: AtomicU64::new(0),
    ipfix_records_failed: AtomicU64::new(0),
};

/// Adds `n` to an event count.
#[inline]
pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}

/// One shard at a scrape.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShardSample {
    /// Kernel counters: packets that passed the filter, those dropped for want of room, and
    /// the times the queue froze.
    pub(crate) received: u64,
    pub(crate) kernel_dropped: u64,
    pub(crate) freezes: u64,
    /// Ring blocks zcap holds now, of `blocks`.
    pub(crate) blocks_held: u64,
    pub(crate) blocks: u64,
    /// Packets this shard handed to the output.
    pub(crate) captured: u64,
    /// Its flow table at its last tick (`None`: flows not tracked).
    pub(crate) flows: Option<FlowSample>,
}

/// A flow table's counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FlowSample {
    pub(crate) active: u64,
    pub(crate) created: u64,
    pub(crate) evicted: u64,
    pub(crate) expired: u64,
}

/// `--pcap-over-ip`'s server at a scrape.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ServedSample {
    pub(crate) clients: u64,
    pub(crate) cut_off: u64,
    pub(crate) dropped: u64,
}

/// The whole capture at a scrape.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sample {
    pub(crate) shards: Vec<ShardSample>,
    /// Packets written, printed or counted (after `-c`), and their bytes on the wire.
    pub(crate) captured: u64,
    pub(crate) captured_bytes: u64,
    pub(crate) pcap_over_ip: Option<ServedSample>,
    /// IPFIX export on, files written.
    pub(crate) ipfix: bool,
    pub(crate) files: bool,
}

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
pub(crate) fn encode(sample: Sample, start: SystemTime) -> String {
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
fn classic(openmetrics: &str) -> String {
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

/// The metrics address, checked before the capture starts.
pub(crate) fn address(args: &crate::args::Args) -> Result<Option<SocketAddr>> {
    args.metrics
        .as_deref()
        .map(|a| {
            a.parse::<SocketAddr>().map_err(|_| {
                anyhow!("--metrics {a:?}: give ADDR:PORT, e.g. 127.0.0.1:9128 or [::]:9128")
            })
        })
        .transpose()
}

/// The server: answers scrapes until dropped.
pub(crate) struct Serving {
    stop: Arc<AtomicBool>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// Binds `addr` with a send timeout on the listening socket, which the sockets it accepts
/// inherit: an answer to a client that never reads gives up after [`IO_TIMEOUT`]. (Not a
/// receive timeout: on the listener that would end tiny_http's accept loop after
/// [`IO_TIMEOUT`] without a client. A client that connects and sends nothing holds only a
/// thread of tiny_http's pool.)
fn bind(addr: SocketAddr) -> std::io::Result<tiny_http::Server> {
    let listener = TcpListener::bind(addr)?;
    let t = nix::sys::time::TimeVal::new(IO_TIMEOUT.as_secs() as _, 0);
    nix::sys::socket::setsockopt(&listener, nix::sys::socket::sockopt::SendTimeout, &t)?;
    tiny_http::Server::from_listener(listener, None)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// The metrics port, bound (or taken by something else: said once, tried again later).
pub(crate) struct Listening {
    addr: SocketAddr,
    server: Option<tiny_http::Server>,
    start: SystemTime,
}

/// Binds `--metrics`' address now, before `-Z` drops root (a port below 1024 needs it).
/// A port that is taken is said once on standard error, not an error: the capture goes on.
pub(crate) fn listen(args: &crate::args::Args) -> Result<Option<Listening>> {
    let Some(addr) = address(args)? else {
        return Ok(None);
    };
    let server = match bind(addr) {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!(
                "zcap: --metrics {addr}: {e}; capturing without metrics, trying again every {} s",
                REBIND_EVERY.as_secs()
            );
            None
        }
    };
    Ok(Some(Listening {
        addr,
        server,
        start: SystemTime::now(),
    }))
}

impl Listening {
    /// Serves `sample()` on a thread of `s` until the returned [`Serving`] is dropped; a
    /// port that was taken is tried again every [`REBIND_EVERY`].
    pub(crate) fn serve<'s, 'e: 's>(
        self,
        s: &'s Scope<'s, 'e>,
        sample: impl Fn() -> Sample + Send + 's,
    ) -> Serving {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        s.spawn(move || self.run(&stopped, sample));
        Serving { stop }
    }

    fn run(mut self, stopped: &AtomicBool, sample: impl Fn() -> Sample) {
        let (addr, start) = (self.addr, self.start);
        let mut last_try = Instant::now();
        while !stopped.load(Relaxed) {
            let Some(sv) = &self.server else {
                std::thread::sleep(Duration::from_millis(100));
                if last_try.elapsed() >= REBIND_EVERY {
                    last_try = Instant::now();
                    if let Ok(sv) = bind(addr) {
                        eprintln!("zcap: --metrics {addr}: serving metrics now");
                        self.server = Some(sv);
                    }
                }
                continue;
            };
            let request = match sv.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                // tiny_http's accept loop ended (out of descriptors, say): bind again.
                Err(e) => {
                    eprintln!("zcap: --metrics {addr}: {e}; serving again as soon as it can");
                    self.server = None;
                    last_try = Instant::now();
                    continue;
                }
            };
            let response = if request.url() == "/metrics" || request.url() == "/" {
                let openmetrics = request.headers().iter().any(|h| {
                    h.field.equiv("Accept")
                        && h.value.as_str().contains("application/openmetrics-text")
                });
                let text = encode(sample(), start);
                let (text, content_type) = match openmetrics {
                    true => (text, OPENMETRICS),
                    false => (classic(&text), PROMETHEUS_TEXT),
                };
                let content_type = tiny_http::Header::from_bytes("Content-Type", content_type)
                    .expect("a valid header");
                tiny_http::Response::from_string(text).with_header(content_type)
            } else {
                tiny_http::Response::from_string("zcap serves /metrics\n").with_status_code(404)
            };
            // A client gone or too slow (the write timed out) is not the capture's concern.
            let _ = request.respond(response);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

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
            }),
            ipfix: true,
            files: true,
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
        has("zcap_shard_received_packets_total{shard=\"1\"} 20");
        has("zcap_shard_flows_evicted_total{shard=\"0\"} 1");
        has("zcap_ring_blocks 128");
        has("zcap_dropped_packets_total{cause=\"compressor\"} 0");
        has("zcap_dropped_packets_total{cause=\"pcap_over_ip\"} 0");
        has("zcap_pcap_over_ip_clients 1");
        assert!(text.contains("zcap_ipfix_records_sent_total "));
        assert!(text.contains("zcap_written_bytes_total "));
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
        let text = encode(s, UNIX_EPOCH);
        for absent in [
            "zcap_flows",
            "zcap_shard_flows",
            "ipfix",
            "zcap_written",
            "pcap_over_ip",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }
}
