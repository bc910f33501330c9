//! The encoder: records into messages, with the templates sent first and again when due.

use std::fmt;

use super::data_record::{write_record, NameFields, Shape};
use super::ie;
use super::message::{
    DEFAULT_MESSAGE, FIRST_TEMPLATE, HEADER_LEN, MAX_MESSAGE, SET_HEADER, TEMPLATE_SET_ID, VERSION,
};
use super::template::{
    min_message, min_message_for, record_len, template_fields, template_len, variant, IFACES,
    MAX_FIELDS, NAMES, NAMES_VARIANTS, SAMPLING_LEN, SAMPLING_TEMPLATE, UNI, VARIANTS,
};
use crate::{EndReason, FlowRecord, FlowStats, TcpState};

/// The set id of an options template set (RFC 7011 §3.3.2).
const OPTIONS_TEMPLATE_SET_ID: u16 = 3;

/// Encoder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderConfig {
    /// Observation domain id in every message header.
    pub observation_domain: u32,
    /// Largest message in bytes, header included: [`min_message()`]..=[`MAX_MESSAGE`].
    pub max_message: usize,
    /// Resend the templates when this many ms of export time passed since they were last
    /// sent (`None`: on the message count only).
    pub template_refresh_ms: Option<u64>,
    /// Resend the templates every this many messages (`None`: on time only).
    pub template_every: Option<u32>,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            observation_domain: 0,
            max_message: DEFAULT_MESSAGE,
            template_refresh_ms: Some(60_000),
            template_every: Some(100),
        }
    }
}

/// A setting the encoder refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `max_message` outside the valid range.
    MessageSize {
        /// What was asked.
        asked: usize,
        /// Smallest valid size.
        min: usize,
        /// Largest valid size.
        max: usize,
    },
    /// A template refresh of 0 ms or 0 messages.
    ZeroRefresh,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MessageSize { asked, min, max } => write!(
                f,
                "IPFIX message size {asked}: must be {min}..={max} bytes (the templates and one record must fit, and the length field is 16 bits)"
            ),
            ConfigError::ZeroRefresh => {
                f.write_str("IPFIX template refresh of 0: give at least 1 s or 1 message")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Counters of an encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncoderStats {
    /// Messages handed out.
    pub messages: u64,
    /// Data records in them.
    pub records: u64,
    /// Messages that carried the templates.
    pub template_messages: u64,
}

/// Builds IPFIX messages from flow records. See the [module docs](crate::ipfix).
#[derive(Debug, Clone)]
pub struct Encoder {
    config: EncoderConfig,
    buf: Vec<u8>,
    /// Open data set: (template id, offset of its header).
    set: Option<(u16, usize)>,
    /// Data records before the open message (the header's sequence number, mod 2^32).
    sequence: u32,
    records_in_message: u32,
    last_templates_ms: Option<u64>,
    messages_since_templates: u32,
    stats: EncoderStats,
    community_id_seed: u16,
    /// Names were given: the templates go in messages of their own, the names templates
    /// with them.
    names_on: bool,
    /// The records' layout beyond their flows: one direction, interfaces, sampling.
    layout: Layout,
    /// A layout set since the open message started: it applies from the next one.
    pending: Option<Layout>,
    /// Options data records in the open message (the sampling announcement): data records
    /// to the sequence number (RFC 7011 §3.1), not flow records to the stats.
    options_in_message: u32,
}

/// What [`Encoder::set_uniflow`], [`Encoder::set_interfaces`] and
/// [`Encoder::set_sampling_interval`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Layout {
    /// [`UNI`] and [`IFACES`] bits.
    family: u16,
    interfaces: (u32, u32),
    /// One packet in this many (2 or more).
    sampling: Option<u32>,
}

/// One flow's record as it goes out: what every one of its records (one, or one per
/// direction) is made of.
struct Item<'a> {
    stats: &'a FlowStats,
    end: EndReason,
    tcp: Option<&'a TcpState>,
    names: Option<&'a NameFields<'a>>,
}

impl Encoder {
    /// An encoder with `config`, or why the config is refused.
    pub fn new(config: EncoderConfig) -> Result<Encoder, ConfigError> {
        let min = min_message();
        if !(min..=MAX_MESSAGE).contains(&config.max_message) {
            return Err(ConfigError::MessageSize {
                asked: config.max_message,
                min,
                max: MAX_MESSAGE,
            });
        }
        if config.template_refresh_ms == Some(0) || config.template_every == Some(0) {
            return Err(ConfigError::ZeroRefresh);
        }
        Ok(Encoder {
            config,
            buf: Vec::with_capacity(config.max_message),
            set: None,
            sequence: 0,
            records_in_message: 0,
            last_templates_ms: None,
            messages_since_templates: 0,
            stats: EncoderStats::default(),
            community_id_seed: 0,
            names_on: false,
            layout: Layout::default(),
            pending: None,
            options_in_message: 0,
        })
    }

    /// From the next message on, one-direction records (RFC 5103's uniflows) with `on`, else
    /// biflows (the default): a record for each direction that has packets (the
    /// initiator's first, its source the initiator; then the responder's, its source the
    /// responder), without the reverse elements, for collectors that read only forward
    /// elements (goflow2, pmacct's nfacctd, akvorado before 2.0.1). Refused if
    /// [`EncoderConfig::max_message`] cannot hold the layout's templates and a record.
    pub fn set_uniflow(&mut self, on: bool) -> Result<(), ConfigError> {
        self.relayout(|l| {
            l.family = if on { l.family | UNI } else { l.family & !UNI };
        })
    }

    /// From the next message on, ingressInterface, egressInterface and flowDirection
    /// (ingress: 0) in every record with `Some((ingress, egress))`, the same for both
    /// directions of a flow (both were observed on that interface); none with `None` (the
    /// default). Refused as [`Encoder::set_uniflow`] is.
    pub fn set_interfaces(&mut self, interfaces: Option<(u32, u32)>) -> Result<(), ConfigError> {
        self.relayout(|l| match interfaces {
            Some(i) => {
                l.family |= IFACES;
                l.interfaces = i;
            }
            None => {
                l.family &= !IFACES;
                l.interfaces = (0, 0);
            }
        })
    }

    /// Announces, from the next message on and with every template refresh, that one packet
    /// in `interval` was selected (`None`, 0 or 1: no sampling, the default): an options
    /// record scoped by the observation domain with samplingInterval (see the
    /// [module docs](crate::ipfix)), so that collectors scale the counts back. The counts
    /// themselves stay those of the packets selected. Refused as [`Encoder::set_uniflow`]
    /// is.
    pub fn set_sampling_interval(&mut self, interval: Option<u32>) -> Result<(), ConfigError> {
        self.relayout(|l| l.sampling = interval.filter(|&n| n > 1))
    }

    /// The sampling interval announced ([`Encoder::set_sampling_interval`]).
    pub fn sampling_interval(&self) -> Option<u32> {
        self.pending.unwrap_or(self.layout).sampling
    }

    fn relayout(&mut self, change: impl FnOnce(&mut Layout)) -> Result<(), ConfigError> {
        let mut new = self.pending.unwrap_or(self.layout);
        change(&mut new);
        let min = min_message_for(new.family, new.sampling.is_some());
        if self.config.max_message < min {
            return Err(ConfigError::MessageSize {
                asked: self.config.max_message,
                min,
                max: MAX_MESSAGE,
            });
        }
        self.pending = (new != self.layout).then_some(new);
        Ok(())
    }

    /// A layout set since: the open message goes out, and the next starts with the
    /// templates of the new one.
    fn apply_pending(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        if let Some(layout) = self.pending.take() {
            if !self.buf.is_empty() {
                self.finish(now_ms, out);
            }
            self.layout = layout;
            self.last_templates_ms = None;
        }
    }

    /// The settings the encoder was created with.
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }

    /// Hashes the records' Community IDs with `seed` from now on (0 until set: the
    /// specification's default).
    pub fn set_community_id_seed(&mut self, seed: u16) {
        self.community_id_seed = seed;
    }

    /// The Community ID seed of the records.
    pub fn community_id_seed(&self) -> u16 {
        self.community_id_seed
    }

    /// Counters so far.
    pub fn stats(&self) -> EncoderStats {
        self.stats
    }

    /// Data records in the open message (not yet handed out): what the next message handed
    /// out by [`Encoder::flush`], or by an [`Encoder::encode`] that finds it full, holds.
    pub fn records_pending(&self) -> u32 {
        self.records_in_message
    }

    /// Adds `record` (exported at `now_ms`, ms since the Unix epoch) to the open message;
    /// when it does not fit, the open message is finished and handed to `out` first.
    pub fn encode(&mut self, record: &FlowRecord, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        self.encode_with_tcp(record, None, now_ms, out);
    }

    /// [`Encoder::encode`], with the connection's TCP state (`None`: as `encode`, for a flow
    /// whose state was not followed): Zeek's conn_state and history in zcrx's connState and
    /// history elements. A state given for a flow that is not TCP is not exported.
    pub fn encode_with_tcp(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        self.encode_inner(record, tcp, None, now_ms, out);
    }

    /// [`Encoder::encode_with_tcp`], with the flow's names (`None`: as `encode_with_tcp`):
    /// the record uses a names template, the names elements first, then the others (see the
    /// [module docs](crate::ipfix)): a name not found is an empty string, a number not
    /// found 0. Names given for an ICMP flow are not exported.
    ///
    /// From the first names given on, the encoder sends its templates (the names templates
    /// too) in messages of their own, before the records; until then its messages are byte
    /// for byte those of an encoder never given names. A record's strings are cut (on a
    /// character boundary, the longest first) only if the record would not fit in a message
    /// of [`EncoderConfig::max_message`] bytes: so a record never spans messages.
    #[cfg(feature = "names")]
    pub fn encode_with_names(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        names: Option<&crate::names::Names>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        let names = names.map(NameFields::new);
        self.encode_inner(record, tcp, names.as_ref(), now_ms, out);
    }

    fn encode_inner(
        &mut self,
        record: &FlowRecord,
        tcp: Option<&TcpState>,
        names: Option<&NameFields<'_>>,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        self.apply_pending(now_ms, out);
        let s = record.stats.oriented();
        let tcp = tcp.filter(|_| s.key.proto() == crate::ipproto::TCP);
        let base = variant(&s, tcp.is_some());
        let names = names.filter(|_| base & 2 == 0);
        if names.is_some() && !self.names_on {
            // The open message carries the templates without the names ones: send it, and
            // the templates, names ones included, before the next record.
            self.names_on = true;
            self.flush(now_ms, out);
            self.last_templates_ms = None;
        }
        let v = base | self.layout.family | if names.is_some() { NAMES } else { 0 };
        let item = Item {
            stats: &s,
            end: record.end,
            tcp,
            names,
        };
        if self.layout.family & UNI == 0 {
            return self.add_record(v, &item, 0, now_ms, out);
        }
        // A record per direction with packets (an active report may have none one way).
        let halves = [0, 1].into_iter().filter(|&h| s.packets[h] > 0);
        let mut any = false;
        for half in halves {
            self.add_record(v, &item, half, now_ms, out);
            any = true;
        }
        if !any {
            self.add_record(v, &item, 0, now_ms, out);
        }
    }

    /// Adds one record of template variant `v` (the direction `half` of a one-direction
    /// layout) to the open message, which goes out first if the record does not fit.
    fn add_record(
        &mut self,
        v: u16,
        item: &Item<'_>,
        half: usize,
        now_ms: u64,
        out: &mut impl FnMut(&[u8]),
    ) {
        let id = FIRST_TEMPLATE + v;
        let len = record_len(v)
            + item
                .tcp
                .map_or(0, |t| 2 + t.conn_state().name().len() + t.history().len());
        // The names' strings, cut to what a message without templates holds (the names
        // templates are sent in messages of their own).
        let room = self.config.max_message - HEADER_LEN - SET_HEADER;
        let cuts = item.names.map(|n| n.cuts(room - len));
        let len = len + cuts.map_or(0, |c| NameFields::part_len(&c));
        if !self.buf.is_empty() {
            let need = len
                + if self.open_set() == Some(id) {
                    0
                } else {
                    SET_HEADER
                };
            if self.buf.len() + need > self.config.max_message {
                self.finish(now_ms, out);
            }
        }
        if self.buf.is_empty() {
            self.start(now_ms, out);
        }
        if self.open_set() != Some(id) {
            self.close_set();
            self.set = Some((id, self.buf.len()));
            self.buf.extend_from_slice(&id.to_be_bytes());
            self.buf.extend_from_slice(&[0, 0]);
        }
        if let (Some(n), Some(cuts)) = (item.names, cuts) {
            n.write(&mut self.buf, &cuts);
        }
        let shape = Shape {
            family: self.layout.family,
            interfaces: self.layout.interfaces,
            half,
        };
        let seed = self.community_id_seed;
        write_record(&mut self.buf, item.stats, item.end, seed, item.tcp, shape);
        debug_assert!(self.buf.len() <= self.config.max_message);
        self.records_in_message += 1;
    }

    /// Finishes the open message, if any, and hands it to `out` (e.g. on a timer, so that
    /// records do not wait for a full message, and at the end).
    pub fn flush(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        self.apply_pending(now_ms, out);
        if !self.buf.is_empty() {
            self.finish(now_ms, out);
        }
    }

    /// Makes the next message start with the templates (e.g. for a new file or after the
    /// collector restarted).
    pub fn resend_templates(&mut self) {
        self.last_templates_ms = None;
    }

    fn open_set(&self) -> Option<u16> {
        self.set.map(|(id, _)| id)
    }

    fn templates_due(&self, now_ms: u64) -> bool {
        let Some(last) = self.last_templates_ms else {
            return true;
        };
        let by_time = self
            .config
            .template_refresh_ms
            .is_some_and(|r| now_ms.saturating_sub(last) >= r);
        let by_count = self
            .config
            .template_every
            .is_some_and(|n| self.messages_since_templates >= n);
        by_time || by_count
    }

    /// Opens a message: header (length, time and sequence filled in by `finish`), then the
    /// templates if due. Once names were given, due templates go first in messages of their
    /// own, as many as they need.
    fn start(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        let due = self.templates_due(now_ms);
        let family = self.layout.family;
        if due && self.names_on {
            let mut sent = 0;
            for v in VARIANTS
                .into_iter()
                .chain(NAMES_VARIANTS)
                .map(|v| v | family)
            {
                let open = !self.buf.is_empty();
                if open && self.buf.len() + template_len(v) > self.config.max_message {
                    self.close_set();
                    self.finish(now_ms, out);
                    sent += 1;
                }
                if self.buf.is_empty() {
                    self.write_header();
                    self.set = Some((TEMPLATE_SET_ID, self.buf.len()));
                    self.buf.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
                    self.buf.extend_from_slice(&[0, 0]);
                }
                self.write_template(v);
            }
            let sampled = self.layout.sampling.is_some();
            if sampled && self.buf.len() + SAMPLING_LEN > self.config.max_message {
                self.finish(now_ms, out);
                sent += 1;
                self.write_header();
            }
            self.write_sampling();
            self.finish(now_ms, out);
            sent += 1;
            self.last_templates_ms = Some(now_ms);
            self.messages_since_templates = 0;
            self.stats.template_messages += sent;
        }
        self.write_header();
        if due && !self.names_on {
            self.write_templates();
            self.write_sampling();
            self.last_templates_ms = Some(now_ms);
            self.messages_since_templates = 0;
            self.stats.template_messages += 1;
        }
    }

    fn write_header(&mut self) {
        self.buf.extend_from_slice(&VERSION.to_be_bytes());
        self.buf.extend_from_slice(&[0; HEADER_LEN - 2]);
    }

    fn write_templates(&mut self) {
        let start = self.buf.len();
        self.buf.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
        self.buf.extend_from_slice(&[0, 0]);
        for v in VARIANTS {
            self.write_template(v | self.layout.family);
        }
        let len = (self.buf.len() - start) as u16;
        self.buf[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// With a sampling interval, closes the open set and appends the announcement: the
    /// options template (scope observationDomainId, samplingInterval) and its one record.
    /// Four-byte fields and no selector id: what goflow2, akvorado, nfacctd and nfcapd 1.7
    /// all read (see the [module docs](crate::ipfix)).
    fn write_sampling(&mut self) {
        let Some(interval) = self.layout.sampling else {
            return;
        };
        self.close_set();
        let b = &mut self.buf;
        b.extend_from_slice(&OPTIONS_TEMPLATE_SET_ID.to_be_bytes());
        b.extend_from_slice(&((SET_HEADER + 6 + 8) as u16).to_be_bytes());
        b.extend_from_slice(&SAMPLING_TEMPLATE.to_be_bytes());
        // Two fields, the first of them the scope.
        b.extend_from_slice(&2u16.to_be_bytes());
        b.extend_from_slice(&1u16.to_be_bytes());
        for (id, len) in [
            (ie::OBSERVATION_DOMAIN_ID, 4u16),
            (ie::SAMPLING_INTERVAL, 4),
        ] {
            b.extend_from_slice(&id.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
        }
        b.extend_from_slice(&SAMPLING_TEMPLATE.to_be_bytes());
        b.extend_from_slice(&((SET_HEADER + 8) as u16).to_be_bytes());
        b.extend_from_slice(&self.config.observation_domain.to_be_bytes());
        b.extend_from_slice(&interval.to_be_bytes());
        self.options_in_message += 1;
    }

    /// Appends template `v` to the open template set.
    fn write_template(&mut self, v: u16) {
        let mut fields = [(0, 0, 0); MAX_FIELDS];
        let n = template_fields(v, &mut fields);
        self.buf
            .extend_from_slice(&(FIRST_TEMPLATE + v).to_be_bytes());
        self.buf.extend_from_slice(&(n as u16).to_be_bytes());
        for &(id, len, pen) in &fields[..n] {
            let id = if pen != 0 { id | 0x8000 } else { id };
            self.buf.extend_from_slice(&id.to_be_bytes());
            self.buf.extend_from_slice(&len.to_be_bytes());
            if pen != 0 {
                self.buf.extend_from_slice(&pen.to_be_bytes());
            }
        }
    }

    fn close_set(&mut self) {
        if let Some((_, at)) = self.set.take() {
            let len = (self.buf.len() - at) as u16;
            self.buf[at + 2..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }

    fn finish(&mut self, now_ms: u64, out: &mut impl FnMut(&[u8])) {
        self.close_set();
        let len = self.buf.len() as u16;
        self.buf[2..4].copy_from_slice(&len.to_be_bytes());
        self.buf[4..8].copy_from_slice(&((now_ms / 1000) as u32).to_be_bytes());
        self.buf[8..12].copy_from_slice(&self.sequence.to_be_bytes());
        self.buf[12..16].copy_from_slice(&self.config.observation_domain.to_be_bytes());
        out(&self.buf);
        self.sequence = self
            .sequence
            .wrapping_add(self.records_in_message + self.options_in_message);
        self.options_in_message = 0;
        self.stats.messages += 1;
        self.stats.records += u64::from(self.records_in_message);
        self.records_in_message = 0;
        self.messages_since_templates += 1;
        self.buf.clear();
    }
}
