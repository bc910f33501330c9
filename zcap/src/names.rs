//! `--names`: what each flow is, read from the first bytes of each direction on the consumer's
//! side (the stage stays header-only) with flowcache's [`FlowNames`].
//!
//! A shard has one `NamesBook`, shared by its consumer (`output::Writer`)
//! and its hooks, which run on the same thread: the lock is never contended. The book holds a
//! [`FlowNames`] per flow being read, keyed by the flow's record key (the packet's key seen
//! from the flow's canonical side, as the flow table's records carry it), at most one per
//! slot of the shard's flow table: a flow beyond is not read, and counted. A flow's direction
//! whose names are done is marked in a per-slot array (with the slot's generation), so that
//! each of its later packets costs one load (a bare TCP ACK costs a header read); a flow
//! whose names are done in both directions and found nothing leaves the book at once. When
//! a flow ends, its entry leaves the book and its [`Names`] go with its record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zcrx_capture::Delivered;
use zcrx_flowcache::names::{FlowNames, Names};
use zcrx_flowcache::{
    extract, ipproto, Direction, EndReason, FlowId, FlowKey, FlowRecord, Fragment, LinkType,
};

/// A flow being read, or read.
struct Entry {
    /// The flow it belongs to: a packet of a later flow of the same key (the earlier one
    /// ended, its record not yet taken) does not feed it.
    id: FlowId,
    names: FlowNames,
}

/// The book's entries and counters, behind the lock.
#[derive(Default)]
struct Inner {
    /// Boxed: the map's buckets (which it keeps at their peak count) hold a pointer each,
    /// not a reader.
    entries: HashMap<FlowKey, Box<Entry>, foldhash::fast::RandomState>,
    /// Flows not read: they came when the book was full.
    not_read: u64,
    /// Packets that went past the per-slot check to a reader (or to find there was room for
    /// none).
    packets_read: u64,
    /// Heap bytes the entries' [`FlowNames`] hold now, and the most they held.
    heap: usize,
    peak_heap: usize,
    /// The most entries held at once.
    peak_entries: usize,
}

/// What a flow's reader is given of one packet.
struct Segment<'d> {
    dir: Direction,
    /// The transport payload: within the datagram's own length and the captured bytes.
    payload: &'d [u8],
    /// Source and destination ports, as the packet has them.
    ports: (u16, u16),
    /// TCP's sequence number (`None`: a UDP datagram).
    seq: Option<u32>,
    tcp_flags: u8,
}

/// One shard's names: see the [module docs](self).
pub struct NamesBook {
    /// How the shard's frames start (the stage's link type).
    link: LinkType,
    /// Per flow-table slot: the directions of the slot's flow that are done, as
    /// [`done_word`] (0: none). Written and read on the shard's thread only (atomics so that
    /// the book is `Sync`; Relaxed, nothing is published through them).
    done: Box<[AtomicU64]>,
    /// Entries held at most (the table's slots).
    most: usize,
    /// DNS names handed out lower-cased ([`NamesBook::lowercase_dns`]).
    lower_dns: bool,
    inner: Mutex<Inner>,
}

/// Both directions, in [`done_word`]'s mask.
const BOTH: u64 = 0b11;

/// The TCP SYN flag.
const SYN: u8 = 0x02;

/// A slot's done word for flow `id` with directions `dirs` done (bit 0 forward, bit 1
/// reverse): the generation + 1 above the two bits, so that a slot's next flow (another
/// generation), and a slot never marked (0), match no flow's word.
fn done_word(id: FlowId, dirs: u64) -> u64 {
    (u64::from(id.generation()) + 1) << 2 | dirs
}

/// What a book holds and held, for the end of the run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BookCounts {
    pub(crate) not_read: u64,
    pub(crate) packets_read: u64,
    /// Flows whose names are being read now.
    pub entries: usize,
    pub(crate) peak_entries: usize,
    pub(crate) peak_heap: usize,
}

impl BookCounts {
    /// The counts of several shards' books.
    pub(crate) fn sum(counts: impl IntoIterator<Item = BookCounts>) -> BookCounts {
        counts
            .into_iter()
            .fold(BookCounts::default(), |a, b| BookCounts {
                not_read: a.not_read + b.not_read,
                packets_read: a.packets_read + b.packets_read,
                entries: a.entries + b.entries,
                peak_entries: a.peak_entries + b.peak_entries,
                peak_heap: a.peak_heap + b.peak_heap,
            })
    }

    /// The note for standard error when flows were not read (`None`: every flow was).
    pub(crate) fn note(&self, slots: usize) -> Option<String> {
        (self.not_read > 0).then(|| {
            format!(
                "zcap: --names: {} flows not read (each shard reads at most {slots} flows at once, one per --max-flows slot)",
                self.not_read
            )
        })
    }

    /// `--names-stats`'s line.
    pub(crate) fn stats_line(&self) -> String {
        format!(
            "zcap: names book: peak entries {}, peak heap bytes {}, flows not read {}, packets read {}",
            self.peak_entries, self.peak_heap, self.not_read, self.packets_read
        )
    }
}

impl NamesBook {
    /// A book for a flow table of `slots` slots whose frames are `link`.
    pub fn new(slots: usize, link: LinkType) -> Self {
        Self::with_room(slots, slots, link)
    }

    /// A book of at most `most` entries for a table of `slots` slots.
    fn with_room(slots: usize, most: usize, link: LinkType) -> Self {
        NamesBook {
            link,
            done: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            most,
            lower_dns: false,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// With `lower`, the DNS names this book hands out are lower-cased (ASCII), as Zeek's
    /// dns.log writes them; else they keep the wire's case (the default).
    pub fn lowercase_dns(mut self, lower: bool) -> Self {
        self.lower_dns = lower;
        self
    }

    /// `names` as handed out: `None` if nothing was found.
    fn out(&self, mut names: Names) -> Option<Box<Names>> {
        if names == Names::default() {
            return None;
        }
        if self.lower_dns {
            for m in [&mut names.dns_query, &mut names.dns_response] {
                if let Some(q) = m.as_mut().and_then(|m| m.question.as_mut()) {
                    q.name.make_ascii_lowercase();
                }
            }
        }
        Some(Box::new(names))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere on the shard's thread ends the run; the book stays readable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks directions `dirs` (bit 0 forward, bit 1 reverse) of flow `id` done: their
    /// later packets are skipped with one load.
    fn mark_done(&self, id: FlowId, dirs: u64) {
        if let Some(d) = self.done.get(id.slot()) {
            d.store(done_word(id, dirs), Ordering::Relaxed);
        }
    }

    /// Marks direction `dir` of flow `id` done too (the other keeps its mark, if this flow's).
    fn mark_done_in(&self, id: FlowId, dir: Direction) {
        if let Some(d) = self.done.get(id.slot()) {
            let w = d.load(Ordering::Relaxed);
            let mine = done_word(id, 0);
            let other = if w >> 2 == mine >> 2 { w & BOTH } else { 0 };
            d.store(done_word(id, other | 1 << dir as u64), Ordering::Relaxed);
        }
    }

    /// A packet the consumer was given (not a loopback's outgoing copy): fed to its flow's
    /// reader unless its direction's names are done.
    #[inline]
    pub fn packet(&self, d: &Delivered<'_>) {
        let tag = d.flow();
        let Some(id) = tag.id() else { return };
        let dir = tag.dir();
        let Some(word) = self.done.get(id.slot()) else {
            return;
        };
        let w = word.load(Ordering::Relaxed);
        if w >> 2 == done_word(id, 0) >> 2 && w & (1 << dir as u64) != 0 {
            return;
        }
        self.read(d, id, dir);
    }

    /// [`NamesBook::packet`] past the check: the frame's payload to the flow's reader.
    #[inline(never)]
    fn read(&self, d: &Delivered<'_>, id: FlowId, dir: Direction) {
        let Some((key, seg)) = self.segment(d, id, dir) else {
            return;
        };
        if seg.seq.is_none() && self.datagram_without_names(&key, id, dir, seg.payload, seg.ports) {
            return;
        }
        self.feed(key, id, seg);
    }

    /// What the reader of flow `id` is to be given of the frame in `d`, keyed by the flow's
    /// (forward) key; `None` when there is nothing to give (not TCP or UDP: the flow is
    /// marked done; a later fragment; a cut header; a bare TCP ACK, FIN or RST).
    fn segment<'d>(
        &self,
        d: &Delivered<'d>,
        id: FlowId,
        dir: Direction,
    ) -> Option<(FlowKey, Segment<'d>)> {
        let m = d.meta();
        let data = d.data();
        let x = extract(self.link, data, m.vlan_tci).ok()?;
        let proto = x.key.proto();
        if !matches!(proto, ipproto::TCP | ipproto::UDP) {
            // Nothing read on other protocols.
            self.mark_done(id, BOTH);
            return None;
        }
        if x.fragment == Fragment::Later {
            return None;
        }
        let key = match dir {
            Direction::Forward => x.key,
            Direction::Reverse => x.key.reversed(),
        };
        // The datagram's end by its own header (Ethernet pads short frames), within the
        // captured bytes.
        let end = (x.l3_offset as usize)
            .saturating_add(x.ip_octets(m.wire_len) as usize)
            .min(data.len());
        let payload = data.get(x.payload_offset as usize..end).unwrap_or(&[]);
        let ports = (x.key.sport(), x.key.dport());
        let seq = if proto == ipproto::TCP {
            let l4 = x.l4_offset as usize;
            let seq = data.get(l4 + 4..l4 + 8)?;
            if payload.is_empty() && x.tcp_flags & SYN == 0 {
                // A bare ACK (or FIN, RST) tells the reader nothing: no lock, no lookup.
                return None;
            }
            Some(u32::from_be_bytes([seq[0], seq[1], seq[2], seq[3]]))
        } else {
            None
        };
        let seg = Segment {
            dir,
            payload,
            ports,
            seq,
            tcp_flags: x.tcp_flags,
        };
        Some((key, seg))
    }

    /// Under the lock: `seg` to the reader of flow `id` (its entry made if there is room),
    /// the heap and peaks counted, the entry dropped if it is done having found nothing,
    /// and the directions done marked.
    fn feed(&self, key: FlowKey, id: FlowId, seg: Segment<'_>) {
        let mut inner = self.lock();
        let inner = &mut *inner;
        inner.packets_read += 1;
        let full = inner.entries.len() >= self.most;
        let entry = match inner.entries.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(_) if full => {
                inner.not_read += 1;
                self.mark_done(id, BOTH);
                return;
            }
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Box::new(Entry {
                id,
                names: FlowNames::new(),
            })),
        };
        if entry.id != id {
            // The key's earlier flow ended and its record is not taken yet: this one waits.
            return;
        }
        let before = entry.names.heap_bytes();
        match seg.seq {
            Some(seq) => entry
                .names
                .tcp(seg.dir, seq, seg.tcp_flags, seg.payload, seg.ports),
            None => entry.names.udp(seg.dir, seg.payload, seg.ports),
        }
        let after = entry.names.heap_bytes();
        let dirs = u64::from(entry.names.is_done_in(Direction::Forward))
            | u64::from(entry.names.is_done_in(Direction::Reverse)) << 1;
        let done = dirs == BOTH;
        let nothing = done && *entry.names.names() == Names::default();
        inner.heap = inner.heap + after - before;
        inner.peak_heap = inner.peak_heap.max(inner.heap);
        inner.peak_entries = inner.peak_entries.max(inner.entries.len());
        if nothing {
            inner.entries.remove(&key);
            inner.heap -= after;
        }
        if dirs != 0 {
            self.mark_done(id, dirs);
        }
    }

    /// Whether a datagram of flow `id` is done with before the book: an empty one (nothing
    /// for the reader), or one neither DNS nor a QUIC long header, which would end its
    /// direction having read nothing — then, unless the flow has an entry already (its QUIC
    /// Initials in this direction), the direction is marked done and takes no entry, so that
    /// a flood of new datagram flows allocates nothing.
    fn datagram_without_names(
        &self,
        key: &FlowKey,
        id: FlowId,
        dir: Direction,
        payload: &[u8],
        ports: (u16, u16),
    ) -> bool {
        if zcrx_flowcache::names::is_dns(ports) {
            return false;
        }
        match payload.first() {
            None => true,
            Some(b) if b & 0x80 == 0 && !self.lock().entries.contains_key(key) => {
                self.mark_done_in(id, dir);
                true
            }
            Some(_) => false,
        }
    }

    /// The names of `record`'s flow (`None`: none found). A record that ends the flow takes
    /// the flow's entry out of the book; an active-timeout report (the flow goes on) takes a
    /// copy of what was found so far.
    pub fn ended(&self, record: &FlowRecord) -> Option<Box<Names>> {
        let mut inner = self.lock();
        let key = &record.stats.key;
        let names = if record.end == EndReason::Active {
            let e = inner.entries.get(key)?;
            e.names.names().clone()
        } else {
            let e = inner.entries.remove(key)?;
            inner.heap -= e.names.heap_bytes();
            e.names.names().clone()
        };
        self.out(names)
    }

    /// The names found so far of the live flow of `key` (`--flows-every`).
    pub(crate) fn live(&self, key: &FlowKey) -> Option<Box<Names>> {
        let inner = self.lock();
        let names = inner.entries.get(key)?.names.names().clone();
        drop(inner);
        self.out(names)
    }

    /// `f(key, server name)` for each of `keys` whose flow's TLS or QUIC ClientHello named its
    /// server (under one lock: for `--top`'s snapshot at a tick).
    pub(crate) fn server_names<'k>(
        &self,
        keys: impl Iterator<Item = &'k FlowKey>,
        mut f: impl FnMut(&FlowKey, &str),
    ) {
        let inner = self.lock();
        for k in keys {
            let name = inner.entries.get(k).and_then(|e| {
                let hello = e.names.names().client_hello.as_ref()?;
                hello.hello.server_name.as_deref()
            });
            if let Some(n) = name {
                f(k, n);
            }
        }
    }

    /// The book's counters.
    pub fn counts(&self) -> BookCounts {
        let inner = self.lock();
        BookCounts {
            not_read: inner.not_read,
            packets_read: inner.packets_read,
            entries: inner.entries.len(),
            peak_entries: inner.peak_entries,
            peak_heap: inner.peak_heap,
        }
    }
}

/// The end of a run with `--names`: the note of flows not read, and with `--names-stats` the
/// books' peaks (several shards' summed), on standard error.
pub(crate) fn report(counts: impl IntoIterator<Item = BookCounts>, slots: usize, stats: bool) {
    let c = BookCounts::sum(counts);
    if let Some(note) = c.note(slots) {
        eprintln!("{note}");
    }
    if stats {
        eprintln!("{}", c.stats_line());
    }
}

/// A TLS version as the JSON shows it: "1.3" ... "1.0", else its hex wire value.
pub(crate) fn tls_version_name(v: u16) -> String {
    match v {
        0x0304 => "1.3".into(),
        0x0303 => "1.2".into(),
        0x0302 => "1.1".into(),
        0x0301 => "1.0".into(),
        _ => format!("0x{v:04x}"),
    }
}

/// The highest version a ClientHello offered (its non-GREASE `supported_versions`, else its
/// legacy version).
pub(crate) fn client_version(n: &Names) -> Option<u16> {
    let h = &n.client_hello.as_ref()?.hello;
    Some(
        h.versions
            .iter()
            .copied()
            .filter(|v| !zcrx_flowcache::names::is_grease(*v))
            .max()
            .unwrap_or(h.legacy_version),
    )
}

/// The DNS question: the query's, else the response's.
pub(crate) fn dns_question(n: &Names) -> Option<&zcrx_flowcache::names::DnsQuestion> {
    n.dns_query
        .as_ref()
        .and_then(|m| m.question.as_ref())
        .or_else(|| n.dns_response.as_ref().and_then(|m| m.question.as_ref()))
}

/// The names' JSON fields (`--flows --json --names`; docs/zcap.md), each only when found.
pub(crate) fn json_fields(n: &Names, o: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    if let Some(h) = &n.client_hello {
        if let Some(s) = &h.hello.server_name {
            put("server_name", s.as_str().into());
        }
        if !h.hello.alpn.is_empty() {
            put("alpn", h.hello.alpn.clone().into());
        }
        put("ja4", h.hello.ja4.as_str().into());
        if let Some(q) = h.quic_version {
            put("quic_version", q.into());
        }
    }
    if let Some(v) = client_version(n) {
        put("tls_client_version", tls_version_name(v).into());
    }
    if let Some(s) = &n.server_hello {
        put("tls_version", tls_version_name(s.version).into());
        put("tls_cipher", s.cipher_suite.into());
    }
    if let Some(q) = dns_question(n) {
        put("dns_query", q.name.as_str().into());
        put("dns_qtype", q.qtype.into());
    }
    if let Some(r) = &n.dns_response {
        put("dns_rcode", r.rcode.into());
        put("dns_answers", r.answers.into());
    }
    if let Some(r) = &n.http_request {
        put("http_method", r.method.as_str().into());
        if let Some(h) = &r.host {
            put("http_host", h.as_str().into());
        }
        put("http_path", r.path.as_str().into());
    }
    if let Some(r) = &n.http_response {
        put("http_status", r.status.into());
    }
}

/// The widest name the text table shows (longer ones end in `~`).
pub const NAME_WIDTH: usize = 40;

/// A flow's name in the text table: the server name, else the DNS query, else the HTTP host;
/// control characters as `?`, at most [`NAME_WIDTH`] characters.
pub fn short_name(n: &Names) -> Option<String> {
    let name = n
        .client_hello
        .as_ref()
        .and_then(|h| h.hello.server_name.as_deref())
        .or_else(|| dns_question(n).map(|q| q.name.as_str()))
        .or_else(|| n.http_request.as_ref().and_then(|r| r.host.as_deref()))?;
    let clean = |c: char| if c.is_control() { '?' } else { c };
    let mut s: String = name.chars().take(NAME_WIDTH).map(clean).collect();
    if name.chars().count() > NAME_WIDTH {
        s.pop();
        s.push('~');
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::BTreeSet;

    use etherparse::PacketBuilder;
    use zcrx_capture::pcapfile::{CaptureFile, FileRing};
    use zcrx_capture::{Consumers, Hooks, Pipeline, PipelineConfig, Steering};
    use zcrx_flowcache::FlowTableConfig;

    const SERVER: [u8; 4] = [198, 18, 0, 2];
    const CLIENT: [u8; 4] = [198, 18, 0, 9];

    fn tcp(to_server: bool, flags: u8, seq: u32, payload: &[u8]) -> Vec<u8> {
        let (src, dst, sp, dp) = if to_server {
            (CLIENT, SERVER, 40000, 80)
        } else {
            (SERVER, CLIENT, 80, 40000)
        };
        let mut h = etherparse::TcpHeader::new(sp, dp, seq, 1000);
        h.syn = flags & 0x02 != 0;
        h.ack = flags & 0x10 != 0;
        h.psh = flags & 0x08 != 0;
        let mut v = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4(src, dst, 64)
            .tcp_header(h)
            .write(&mut v, payload)
            .unwrap();
        v
    }

    fn udp(src: ([u8; 4], u16), dst: ([u8; 4], u16), payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4(src.0, dst.0, 64)
            .udp(src.1, dst.1)
            .write(&mut v, payload)
            .unwrap();
        v
    }

    fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
        for (i, f) in frames.iter().enumerate() {
            w.write_packet(&pcap_file::pcap::PcapPacket::new(
                std::time::Duration::new(1_700_000_000, i as u32 * 1000),
                f.len() as u32,
                f,
            ))
            .unwrap();
        }
        w.into_writer()
    }

    /// Through the stage, as zcap runs it: each packet's key, reversed when its tag says
    /// Reverse, is its flow record's key (whichever side starts, whichever side sorts
    /// first); the names read on the consumer's side reach the flow's record; a flow whose
    /// names are done with nothing found leaves the book at once; the book is empty at the
    /// end.
    #[test]
    fn names_reach_the_record_of_their_flow() {
        let req = b"GET /a HTTP/1.1\r\nHost: book.example\r\n\r\n";
        let dns_q = [
            0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'n', b'l', 0, 0, 1, 0, 1,
        ];
        let mut dns_r = dns_q;
        dns_r[2] = 0x81;
        dns_r[3] = 0x83; // NXDOMAIN
        let frames = vec![
            // The client (sorting after the server) starts: its packets are Reverse.
            tcp(true, 0x02, 100, &[]),
            tcp(false, 0x12, 500, &[]),
            tcp(true, 0x10, 101, &[]),
            // The request in two segments, the second first.
            tcp(true, 0x18, 111, &req[10..]),
            tcp(true, 0x18, 101, &req[..10]),
            tcp(false, 0x18, 501, b"HTTP/1.1 204 No Content\r\n\r\n"),
            // DNS from the side that sorts first: Forward.
            udp((SERVER, 5353), (CLIENT, 53), &dns_q),
            udp((CLIENT, 53), (SERVER, 5353), &dns_r),
            // Neither TLS, nor DNS, nor HTTP: done with nothing at its first datagram...
            udp((CLIENT, 7000), (SERVER, 7001), b"\x00\x01 not a name"),
            udp((SERVER, 7001), (CLIENT, 7000), b"\x00\x02 still none"),
            // One way, neither DNS nor QUIC: its direction is done at its first datagram, the
            // others cost the check alone (the other direction says nothing).
            udp((CLIENT, 9000), (SERVER, 9001), b"syslog 1"),
            udp((CLIENT, 9000), (SERVER, 9001), b"syslog 2"),
            udp((CLIENT, 9000), (SERVER, 9001), b"syslog 3"),
            // ... and a truncated frame and an ICMP-less IP header change nothing.
            tcp(true, 0x18, 200, b"x")[..30].to_vec(),
        ];
        let bytes = pcap(&frames);
        let file = CaptureFile::from_reader("names", std::io::Cursor::new(bytes)).unwrap();
        let ring = FileRing::builder().block_count(4).build(file).unwrap();
        let book = NamesBook::new(16, LinkType::Ethernet);
        let config = PipelineConfig::builder()
            .consumers(Consumers::Inline)
            .steering(Steering::Flows(
                FlowTableConfig::with_capacity(16).with_tcp_state(true),
            ))
            .link(LinkType::Ethernet)
            .build()
            .unwrap();
        let seen = Mutex::new(BTreeSet::new());
        let mut ended = Vec::new();
        let after_datagrams = Mutex::new(None);
        Pipeline::new(&ring, config)
            .run(
                |_| {
                    |d: &Delivered<'_>| {
                        if let (Some(k), Some(_)) = (d.flow_key(), d.flow().id()) {
                            let k = match d.flow().dir() {
                                Direction::Forward => k,
                                Direction::Reverse => k.reversed(),
                            };
                            seen.lock().unwrap().insert(k.to_string());
                        }
                        book.packet(d);
                        if d.data().len() > 30 && d.flow_key().is_some_and(|k| k.sport() == 7001) {
                            *after_datagrams.lock().unwrap() = Some(book.counts().entries);
                        }
                    }
                },
                Hooks::new().on_flow_ended(|e| {
                    ended.push((e.record.stats.key.to_string(), book.ended(&e.record)));
                }),
            )
            .unwrap();
        let seen = seen.into_inner().unwrap();
        assert_eq!(ended.len(), 4, "{ended:?}");
        for (key, _) in &ended {
            assert!(seen.contains(key), "record key {key} not in {seen:?}");
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
        let by_port = |p: &str| {
            ended
                .iter()
                .find(|(k, _)| k.contains(p))
                .unwrap_or_else(|| panic!("{p}: {ended:?}"))
                .1
                .clone()
        };
        let http = by_port(":80").expect("HTTP names");
        let r = http.http_request.as_ref().unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/a"));
        assert_eq!(r.host.as_deref(), Some("book.example"));
        assert_eq!(http.http_response.unwrap().status, 204);
        let dns = by_port(":53").expect("DNS names");
        assert_eq!(dns_question(&dns).unwrap().name, "a.nl");
        assert_eq!(dns.dns_response.as_ref().unwrap().rcode, 3);
        assert_eq!(by_port(":7001"), None);
        assert_eq!(by_port(":9001"), None);
        // HTTP and DNS stay (their records take them), the nameless flow left at once.
        assert_eq!(*after_datagrams.lock().unwrap(), Some(2));
        let c = book.counts();
        assert_eq!((c.entries, c.not_read), (0, 0), "{c:?}");
        // Read: the HTTP flow's SYN, SYN-ACK, two request segments and response (not its
        // bare ACK), both DNS datagrams; not the truncated frame (no sequence number), nor
        // the datagrams of the nameless and one-way flows (neither DNS nor QUIC: each
        // direction is marked done at its first datagram, with no entry and no lock taken
        // for an entry).
        assert_eq!(c.packets_read, 5 + 2, "{c:?}");
        assert!(c.peak_entries >= 2);
        let mut o = serde_json::Map::new();
        json_fields(&http, &mut o);
        assert_eq!(
            serde_json::Value::Object(o).to_string(),
            r#"{"http_host":"book.example","http_method":"GET","http_path":"/a","http_status":204}"#
        );
        assert_eq!(short_name(&dns).as_deref(), Some("a.nl"));
    }

    /// A book full (one entry per slot) reads no further flow, and counts each once.
    #[test]
    fn a_full_book_counts_the_flows_it_does_not_read() {
        // Half-open handshakes (a SYN, sent twice): entries that hold nothing but stay.
        let frames: Vec<Vec<u8>> = (0..6u32)
            .flat_map(|i| {
                let mut f = tcp(true, 0x02, 100 + i, &[]);
                f[34..36].copy_from_slice(&(41000 + i as u16).to_be_bytes());
                [f.clone(), f]
            })
            .collect();
        let file = CaptureFile::from_reader("full", std::io::Cursor::new(pcap(&frames))).unwrap();
        let ring = FileRing::builder().block_count(4).build(file).unwrap();
        // A book of two entries: four flows are not read.
        let slots = 2;
        let book = NamesBook::with_room(16, slots, LinkType::Ethernet);
        let config = PipelineConfig::builder()
            .consumers(Consumers::Inline)
            .steering(Steering::Flows(FlowTableConfig::with_capacity(16)))
            .link(LinkType::Ethernet)
            .build()
            .unwrap();
        Pipeline::new(&ring, config)
            .run(|_| |d: &Delivered<'_>| book.packet(d), Hooks::new())
            .unwrap();
        let c = book.counts();
        assert_eq!((c.not_read, c.entries, c.peak_entries), (4, 2, 2), "{c:?}");
        assert_eq!(c.peak_heap, 0, "a SYN allocates nothing");
        let note = c.note(slots).unwrap();
        assert!(note.contains("4 flows not read"), "{note}");
    }
}
