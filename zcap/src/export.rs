//! Flow export: IPFIX messages to a collector over UDP (`--ipfix HOST:PORT`) and/or to a
//! file (`--ipfix-file F`, RFC 5655: messages back to back). Send errors (collector down,
//! ICMP port unreachable) are counted and reported, never fatal to the capture.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use zcrx_flowcache::ipfix::{Encoder, EncoderConfig, MAX_MESSAGE};
use zcrx_flowcache::names::Names;
use zcrx_flowcache::{FlowRecord, TcpState};

/// Socket send buffer asked for: room for bursts of messages (a flush of many flows at once).
const SEND_BUFFER: usize = 4 << 20;

/// The exporter: one per zcap run, shared by the shards' stage threads.
pub(crate) struct Export {
    encoder: Encoder,
    sinks: Sinks,
    /// Flow time is packet time (`-r`): export times come from the records, not the clock.
    packet_time: bool,
    now_ms: u64,
    /// Flow records given (a one-direction export writes up to two records each).
    flows: u64,
    /// `--kafka`: how records become messages.
    kafka: crate::kafka::Records,
}

/// Where finished messages go, and what went wrong there.
struct Sinks {
    collector: Option<(UdpSocket, SocketAddr)>,
    file: Option<(BufWriter<File>, String)>,
    send_errors: u64,
    last_send_error: Option<String>,
    file_error: Option<String>,
}

/// What an export did, for the final counts.
pub(crate) struct ExportReport {
    pub(crate) flows: u64,
    /// IPFIX data records written: `flows`, or with `--ipfix-uniflow` one a direction.
    pub(crate) records: u64,
    /// IPFIX went somewhere (`--ipfix`, `--ipfix-file`); else only Kafka was asked.
    pub(crate) ipfix: bool,
    pub(crate) messages: u64,
    pub(crate) send_errors: u64,
    pub(crate) last_send_error: Option<String>,
    pub(crate) file_error: Option<String>,
}

/// `HOST:PORT` (`[v6]:PORT` for an IPv6 literal) to one address, or a clear error.
pub(crate) fn resolve(collector: &str) -> Result<SocketAddr> {
    let (host, port) = collector.rsplit_once(':').ok_or_else(|| {
        anyhow!("--ipfix {collector:?}: give HOST:PORT (e.g. 127.0.0.1:4739 or [::1]:4739)")
    })?;
    if host.is_empty() {
        bail!("--ipfix {collector:?}: the host is missing (HOST:PORT)");
    }
    let port: u16 = port.parse().map_err(|_| {
        anyhow!("--ipfix {collector:?}: port {port:?} is not a number in 1..=65535")
    })?;
    if port == 0 {
        bail!("--ipfix {collector:?}: port 0 is not a collector's port (1..=65535)");
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("--ipfix {collector:?}: cannot resolve {host:?}"))?
        .next()
        .ok_or_else(|| anyhow!("--ipfix {collector:?}: {host:?} has no address"))
}

/// The export a capture asks for: its encoder's settings (checked) and where the messages
/// go (at least one of the two).
#[derive(Debug, Clone)]
pub(crate) struct ExportConfig {
    pub(crate) encoder: EncoderConfig,
    /// `--ipfix HOST:PORT`.
    pub(crate) collector: Option<String>,
    /// `--ipfix-file FILE`.
    pub(crate) file: Option<String>,
    /// `--community-id-seed`.
    pub(crate) community_id_seed: u16,
    /// `--ipfix-uniflow`: a record per direction.
    pub(crate) uniflow: bool,
    /// `--ipfix-ifindex`: the records' interface indexes, as given.
    pub(crate) interfaces: Option<(u32, u32)>,
    /// The live capture's interface (not `any`): its index is the records' ingress
    /// interface unless `interfaces` is given.
    pub(crate) interface: Option<String>,
    /// `--sample`: one packet in this many (2 or more), announced.
    pub(crate) sampling: Option<u32>,
    /// `--ipfix-source`: the datagrams' source address.
    pub(crate) source: Option<std::net::IpAddr>,
    /// `--kafka`: the records published too (`crate::kafka`'s relay, started with the
    /// sandbox).
    pub(crate) kafka: Option<crate::kafka::KafkaConfig>,
}

impl ExportConfig {
    /// The encoder this export asks for, its layout set, with `interfaces` in its records
    /// (or none); refused if the message size cannot hold the layout.
    fn encoder_with(
        &self,
        interfaces: Option<(u32, u32)>,
    ) -> Result<Encoder, zcrx_flowcache::ipfix::ConfigError> {
        let mut encoder = Encoder::new(self.encoder)?;
        encoder.set_community_id_seed(self.community_id_seed);
        encoder.set_uniflow(self.uniflow)?;
        encoder.set_interfaces(interfaces)?;
        encoder.set_sampling_interval(self.sampling)?;
        Ok(encoder)
    }

    /// [`ExportConfig::encoder_with`] the interfaces the records will carry (a live
    /// capture's index not yet resolved: a stand-in of the same size).
    pub(crate) fn encoder(&self) -> Result<Encoder, zcrx_flowcache::ipfix::ConfigError> {
        let stand_in = self.interface.as_ref().map(|_| (0, 0));
        self.encoder_with(self.interfaces.or(stand_in))
    }

    /// The records' interfaces: as given, or the capture interface's index and 0.
    fn interfaces(&self) -> Result<Option<(u32, u32)>> {
        if self.interfaces.is_some() {
            return Ok(self.interfaces);
        }
        let Some(name) = &self.interface else {
            return Ok(None);
        };
        let index = nix::net::if_::if_nametoindex(name.as_str())
            .with_context(|| format!("--ipfix: the index of interface {name}"))?;
        Ok(Some((index, 0)))
    }
}

impl Export {
    /// The exporter `config` asks for (`None`: no export). Opens the socket and the file
    /// now, so that a bad address or path stops zcap before it captures.
    pub(crate) fn open(
        config: Option<&ExportConfig>,
        packet_time: bool,
    ) -> Result<Option<Mutex<Export>>> {
        let Some(config) = config else {
            return Ok(None);
        };
        let interfaces = config.interfaces()?;
        let encoder = config
            .encoder_with(interfaces)
            .map_err(|e| anyhow!("--ipfix-message-size: {e}"))?;
        let kafka = match config.kafka.as_ref().map(|k| k.format) {
            #[cfg(feature = "kafka")]
            Some(crate::kafka::Format::Goflow2) => {
                crate::kafka::Records::Goflow2(crate::kafka::goflow2::Goflow2::new(
                    config.encoder.observation_domain,
                    interfaces.unwrap_or_default(),
                    config.sampling.unwrap_or(1),
                    config.source,
                ))
            }
            _ => crate::kafka::Records::Json,
        };
        let collector = match &config.collector {
            Some(c) => Some(connect(c, config.source)?),
            None => None,
        };
        let file = match &config.file {
            Some(path) => {
                let f = File::create(path).with_context(|| format!("--ipfix-file {path}"))?;
                Some((BufWriter::with_capacity(1 << 16, f), path.clone()))
            }
            None => None,
        };
        Ok(Some(Mutex::new(Export {
            encoder,
            sinks: Sinks {
                collector,
                file,
                send_errors: 0,
                last_send_error: None,
                file_error: None,
            },
            packet_time,
            now_ms: 0,
            flows: 0,
            kafka,
        })))
    }

    fn clock(&mut self, record: Option<&FlowRecord>) -> u64 {
        let now = if self.packet_time {
            record.map_or(0, |r| r.stats.last_ns / 1_000_000)
        } else {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        };
        self.now_ms = self.now_ms.max(now);
        self.now_ms
    }

    /// Adds a finished flow (or an active-timeout report), with its TCP state if followed
    /// and its names if read (then in a names template), to the open message.
    pub(crate) fn record(&mut self, r: &FlowRecord, tcp: Option<&TcpState>, names: Option<&Names>) {
        if crate::kafka::running() {
            let seed = self.encoder.community_id_seed();
            // A file's flows wait for room as long as the relay makes progress; a capture's
            // last ones, for a bounded time (a stop must end); others never.
            use crate::kafka::Patience;
            let patience = match (self.packet_time, r.end) {
                (true, _) => Patience::Unbounded,
                (false, zcrx_flowcache::EndReason::Flush) => Patience::Bounded,
                _ => Patience::None,
            };
            let now = self.clock(Some(r));
            self.kafka.publish(r, tcp, names, seed, now, patience);
        }
        self.flows += 1;
        if !self.sinks.ipfix() {
            return;
        }
        let now = self.clock(Some(r));
        let (encoder, sinks) = (&mut self.encoder, &mut self.sinks);
        ship_counted(
            encoder,
            |e, mut out| e.encode_with_names(r, tcp, names, now, &mut out),
            sinks,
        );
    }

    /// Sends what the open message holds (on every tick, so records wait at most a second).
    pub(crate) fn flush(&mut self) {
        crate::kafka::flush();
        let now = self.clock(None);
        let (encoder, sinks) = (&mut self.encoder, &mut self.sinks);
        ship_counted(encoder, |e, mut out| e.flush(now, &mut out), sinks);
    }

    /// Flushes everything and reports.
    pub(crate) fn finish(mut self) -> ExportReport {
        self.flush();
        let mut sinks = self.sinks;
        if let Some((f, path)) = &mut sinks.file {
            if let Err(e) = f.flush() {
                sinks.file_error.get_or_insert(format!("{path}: {e}"));
            }
        }
        let s = self.encoder.stats();
        ExportReport {
            flows: self.flows,
            records: s.records,
            ipfix: sinks.ipfix(),
            messages: s.messages,
            send_errors: sinks.send_errors,
            last_send_error: sinks.last_send_error,
            file_error: sinks.file_error,
        }
    }
}

/// Runs `encode` (which hands `encoder`'s finished messages to its callback), ships each
/// message, and counts messages and the data records in them as sent or failed: the
/// records by the encoder's own count of records handed out (a flow may add two, one a
/// direction, and a message may end between them), as failed if any message of the call
/// failed.
fn ship_counted(
    encoder: &mut Encoder,
    encode: impl FnOnce(&mut Encoder, &mut dyn FnMut(&[u8])),
    sinks: &mut Sinks,
) {
    let ev = &crate::metrics::EVENTS;
    let before = encoder.stats().records;
    let (mut sent, mut failed) = (0u64, 0u64);
    encode(encoder, &mut |m| match sinks.ship(m) {
        true => sent += 1,
        false => failed += 1,
    });
    let records = encoder.stats().records - before;
    crate::metrics::add(&ev.ipfix_messages_sent, sent);
    crate::metrics::add(&ev.ipfix_messages_failed, failed);
    match failed {
        0 => crate::metrics::add(&ev.ipfix_records_sent, records),
        _ => crate::metrics::add(&ev.ipfix_records_failed, records),
    }
}

/// A UDP socket connected to the collector, with a large send buffer, sending from
/// `source` if given (`--ipfix-source`).
fn connect(collector: &str, source: Option<std::net::IpAddr>) -> Result<(UdpSocket, SocketAddr)> {
    let to = resolve(collector)?;
    let local: SocketAddr = match source {
        Some(ip) if ip.is_ipv4() != to.is_ipv4() => {
            bail!("--ipfix-source {ip}: not of the collector's address family ({to})")
        }
        Some(ip) => SocketAddr::new(ip, 0),
        None if to.is_ipv4() => "0.0.0.0:0".parse().expect("literal"),
        None => "[::]:0".parse().expect("literal"),
    };
    let sock = UdpSocket::bind(local).with_context(|| match source {
        Some(ip) => format!("--ipfix-source {ip}: not an address of this host"),
        None => "--ipfix: opening a UDP socket".to_string(),
    })?;
    sock.connect(to)
        .with_context(|| format!("--ipfix {collector}: connecting to {to}"))?;
    // The kernel caps it at net.core.wmem_max; what we get is what we get.
    let _ = nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::SndBuf, &SEND_BUFFER);
    Ok((sock, to))
}

impl Sinks {
    /// Whether IPFIX messages go anywhere (else the export is Kafka's alone).
    fn ipfix(&self) -> bool {
        self.collector.is_some() || self.file.is_some()
    }

    /// One finished message to the collector and the file. A send error is counted (and
    /// said once on stderr); a file error ends file output and is reported at the end.
    /// Returns whether every destination took the message.
    fn ship(&mut self, m: &[u8]) -> bool {
        debug_assert!(m.len() <= MAX_MESSAGE);
        let mut took = true;
        if let Some((sock, to)) = &self.collector {
            if let Err(e) = sock.send(m) {
                if self.send_errors == 0 {
                    eprintln!(
                        "zcap: ipfix: sending to {to}: {e} (counting further errors; capture goes on)"
                    );
                }
                self.send_errors += 1;
                self.last_send_error = Some(e.to_string());
                took = false;
            }
        }
        if let Some((f, path)) = &mut self.file {
            if let Err(e) = f.write_all(m) {
                eprintln!("zcap: --ipfix-file {path}: {e}; no more flows are written to it");
                self.file_error = Some(format!("{path}: {e}"));
                self.file = None;
                took = false;
            }
        }
        took
    }
}

/// Finishes the export (if any) and says what it did on stderr, with the final counts;
/// true if the IPFIX file could not be written completely.
pub(crate) fn report(export: Option<Mutex<Export>>) -> bool {
    let Some(e) = export else {
        return false;
    };
    let r = e.into_inner().unwrap_or_else(|p| p.into_inner()).finish();
    crate::kafka::finish();
    if !r.ipfix {
        return false;
    }
    let records = match r.records == r.flows {
        true => String::new(),
        false => format!(" ({} records, one a direction)", r.records),
    };
    eprintln!(
        "{} flows exported in {} IPFIX messages{records}",
        r.flows, r.messages
    );
    if r.send_errors > 0 {
        eprintln!(
            "{} IPFIX messages not sent (last error: {})",
            r.send_errors,
            r.last_send_error.as_deref().unwrap_or("?")
        );
    }
    match r.file_error {
        Some(e) => {
            eprintln!("zcap: --ipfix-file {e}");
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zcrx_flowcache::{EndReason, FlowKey, FlowStats};

    /// One-direction records, two a flow, fill messages that end between a flow's two: the
    /// records counted as sent are every record the messages hold.
    #[test]
    fn records_sent_count_every_record_of_one_direction_messages() {
        let dir = std::env::temp_dir().join(format!("zcap-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("records.ipfix");
        let mut sinks = Sinks {
            collector: None,
            file: Some((
                BufWriter::new(File::create(&path).unwrap()),
                path.display().to_string(),
            )),
            send_errors: 0,
            last_send_error: None,
            file_error: None,
        };
        let mut encoder = Encoder::new(EncoderConfig::default()).unwrap();
        encoder.set_uniflow(true).unwrap();
        let sent = || {
            crate::metrics::EVENTS
                .ipfix_records_sent
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        let before = sent();
        for i in 0..1000u16 {
            let mut stats = FlowStats::default();
            stats.key = FlowKey::v4(
                [198, 18, 0, 1].into(),
                [198, 18, 0, 2].into(),
                17,
                1024 + i,
                53,
            );
            stats.packets = [1, 1];
            stats.bytes = [80, 120];
            let r = FlowRecord {
                stats,
                end: EndReason::Idle,
            };
            ship_counted(
                &mut encoder,
                |e, mut out| e.encode(&r, 1, &mut out),
                &mut sinks,
            );
        }
        ship_counted(&mut encoder, |e, mut out| e.flush(1, &mut out), &mut sinks);
        assert_eq!(encoder.stats().records, 2000);
        // No other unit test ships IPFIX: every record here, once.
        assert_eq!(sent() - before, 2000);
        assert_eq!(sinks.send_errors, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
