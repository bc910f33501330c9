//! `--names`: what each flow is, read from the first bytes of each direction on the consumer's
//! side (the stage stays header-only) with flowcache's [`FlowNames`].
//!
//! A shard has one [`NamesBook`], shared by its consumer ([`Writer`](crate::output::Writer))
//! and its hooks, which run on the same thread: the lock is never contended. The book holds a
//! [`FlowNames`] per flow being read, keyed by the flow's record key (the packet's key seen
//! from the flow's canonical side, as the flow table's records carry it), at most one per
//! slot of the shard's flow table: a flow beyond is not read, and counted. A flow whose
//! names are done is marked in a per-slot array (its slot's generation), so that each of its
//! later packets costs one load; one whose names are done and found nothing leaves the book at
//! once. When a flow ends, its entry leaves the book and its [`Names`] go with its record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
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
    entries: HashMap<FlowKey, Entry>,
    /// Flows not read: they came when the book was full.
    not_read: u64,
    /// Heap bytes the entries' [`FlowNames`] hold now, and the most they held.
    heap: usize,
    peak_heap: usize,
    /// The most entries held at once.
    peak_entries: usize,
}

/// One shard's names: see the [module docs](self).
pub(crate) struct NamesBook {
    /// How the shard's frames start (the stage's link type).
    link: LinkType,
    /// Per flow-table slot: 1 + the generation of the slot's flow whose names are done (0:
    /// none). Written and read on the shard's thread only (atomics so that the book is
    /// `Sync`; Relaxed, nothing is published through them).
    done: Box<[AtomicU32]>,
    inner: Mutex<Inner>,
}

/// What a book holds and held, for the end of the run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BookCounts {
    pub(crate) not_read: u64,
    pub(crate) entries: usize,
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
            "zcap: names book: peak entries {}, peak heap bytes {}, flows not read {}",
            self.peak_entries, self.peak_heap, self.not_read
        )
    }
}

impl NamesBook {
    /// A book for a flow table of `slots` slots whose frames are `link`.
    pub(crate) fn new(slots: usize, link: LinkType) -> Self {
        NamesBook {
            link,
            done: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere on the shard's thread ends the run; the book stays readable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks flow `id`'s names done: its later packets are skipped with one load.
    fn mark_done(&self, id: FlowId) {
        if let Some(d) = self.done.get(id.slot()) {
            d.store(id.generation().wrapping_add(1), Ordering::Relaxed);
        }
    }

    /// A packet the consumer was given (not a loopback's outgoing copy): fed to its flow's
    /// reader unless the flow's names are done.
    #[inline]
    pub(crate) fn packet(&self, d: &Delivered<'_>) {
        let tag = d.flow();
        let Some(id) = tag.id() else { return };
        let mark = id.generation().wrapping_add(1);
        if self
            .done
            .get(id.slot())
            .is_none_or(|g| g.load(Ordering::Relaxed) == mark)
        {
            return;
        }
        self.read(d, id, tag.dir());
    }

    /// [`NamesBook::packet`] past the check: the frame's payload to the flow's reader.
    #[inline(never)]
    fn read(&self, d: &Delivered<'_>, id: FlowId, dir: Direction) {
        let m = d.meta();
        let data = d.data();
        let Ok(x) = extract(self.link, data, m.vlan_tci) else {
            return;
        };
        let proto = x.key.proto();
        if !matches!(proto, ipproto::TCP | ipproto::UDP) {
            // Nothing read on other protocols.
            self.mark_done(id);
            return;
        }
        if x.fragment == Fragment::Later {
            return;
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
        let tcp = if proto == ipproto::TCP {
            let l4 = x.l4_offset as usize;
            let Some(seq) = data.get(l4 + 4..l4 + 8) else {
                return;
            };
            Some(u32::from_be_bytes([seq[0], seq[1], seq[2], seq[3]]))
        } else {
            None
        };
        let mut inner = self.lock();
        let inner = &mut *inner;
        let full = inner.entries.len() >= self.done.len();
        let entry = match inner.entries.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(_) if full => {
                inner.not_read += 1;
                self.mark_done(id);
                return;
            }
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Entry {
                id,
                names: FlowNames::new(),
            }),
        };
        if entry.id != id {
            // The key's earlier flow ended and its record is not taken yet: this one waits.
            return;
        }
        let before = entry.names.heap_bytes();
        match tcp {
            Some(seq) => entry.names.tcp(dir, seq, x.tcp_flags, payload, ports),
            None => entry.names.udp(dir, payload, ports),
        }
        let after = entry.names.heap_bytes();
        let done = entry.names.is_done();
        let nothing = done && *entry.names.names() == Names::default();
        inner.heap = inner.heap + after - before;
        inner.peak_heap = inner.peak_heap.max(inner.heap);
        inner.peak_entries = inner.peak_entries.max(inner.entries.len());
        if nothing {
            inner.entries.remove(&key);
            inner.heap -= after;
        }
        if done {
            self.mark_done(id);
        }
    }

    /// The names of `record`'s flow (`None`: none found). A record that ends the flow takes
    /// the flow's entry out of the book; an active-timeout report (the flow goes on) takes a
    /// copy of what was found so far.
    pub(crate) fn ended(&self, record: &FlowRecord) -> Option<Box<Names>> {
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
        (names != Names::default()).then(|| Box::new(names))
    }

    /// The names found so far of the live flow of `key` (`--flows-every`).
    pub(crate) fn live(&self, key: &FlowKey) -> Option<Box<Names>> {
        let inner = self.lock();
        let names = inner.entries.get(key)?.names.names();
        (*names != Names::default()).then(|| Box::new(names.clone()))
    }

    /// The book's counters.
    pub(crate) fn counts(&self) -> BookCounts {
        let inner = self.lock();
        BookCounts {
            not_read: inner.not_read,
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
pub(crate) const NAME_WIDTH: usize = 40;

/// A flow's name in the text table: the server name, else the DNS query, else the HTTP host;
/// control characters as `?`, at most [`NAME_WIDTH`] characters.
pub(crate) fn short_name(n: &Names) -> Option<String> {
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
