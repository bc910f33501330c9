//! The sink and its counters behind one lock ([`OutState`], [`Output`]): the per-packet
//! paths (the short ones for one capture file or only a count, the general one for
//! everything else: rotation, cooked records, lines, the tee), the merge of shards, the
//! final flush.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zcrx_capture::pcapfile::{PacketRecord, SaveError, SaveFile, Taken, FLUSH_AT};
use zcrx_capture::Delivered;
use zcrx_flowcache::LinkType;

use super::sink::{Sink, TextStyle};
use crate::merge::Merge;
use crate::pcap_over_ip::TeeSink;
use crate::print;
use crate::record::{sll2_header, write_cooked, Record};
use crate::rotate::Next;

/// The sink and its counters, behind one lock (one lock per packet, no other shared write).
pub(crate) struct OutState {
    sink: Sink,
    style: TextStyle,
    /// Text lines, with the TCP conversations relative numbers need.
    printer: print::LinePrinter,
    /// Printed lines not yet written (block-buffered output only).
    text: Vec<u8>,
    /// The line's time stamp (reused).
    stamp: String,
    /// Inside a block's packets: lines wait for its end (see [`OutState::batch_lines`]).
    batching: bool,
    captured: u64,
    bytes: u64,
    truncated: u64,
    error: Option<SaveError>,
    /// Time stamps of the previous and the first packet (-ttt, -ttttt).
    prev_ns: Option<u64>,
    first_ns: Option<u64>,
    /// Several shards: their packets put in time-stamp order first (with the link type
    /// they are read with).
    merge: Option<(Merge, LinkType)>,
    /// pcapng on standard output with `-i any`: interface index to IDB id.
    stdout_ids: Vec<(u32, u32)>,
    /// [`OutState::plain`], kept up to date when the merge is set.
    pub(super) plain: Plain,
    /// `--pcap-over-ip`: every packet written also as a pcap record for the clients (with
    /// `-i any`'s interface ids).
    tee: Option<(SaveFile<TeeSink>, InterfaceIds)>,
}

/// Bytes of lines gathered before a write, when block-buffered.
const TEXT_BUFFER: usize = 64 << 10;

/// pcapng interface ids by interface index (`-i any`'s records, see `record::write_cooked`).
type InterfaceIds = Vec<(u32, u32)>;

/// The short paths of [`OutState::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plain {
    /// Every packet through [`OutState::write_any`].
    No,
    /// [`OutState::write_plain`].
    Save,
    /// Nothing to write: only the count.
    Count,
}

/// Where packets go and how many went.
pub(crate) struct Output {
    /// `None` while a single shard's consumer borrows it for the run (no lock per packet);
    /// put back after the run.
    state: Mutex<Option<OutState>>,
    limit: u64,
    /// `captured` and `bytes`, published for the status line and SIGUSR1.
    pub(crate) seen: (AtomicU64, AtomicU64),
    /// Several shards: the packets each handed to the output (`--metrics`).
    by_shard: Vec<AtomicU64>,
}

impl Output {
    /// Packets go to `sink`, lines look as `style` says, and the capture stops after `limit`
    /// packets (`-c`).
    pub(crate) fn new(sink: Sink, style: TextStyle, limit: u64) -> Self {
        let out = Output {
            state: Mutex::new(Some(OutState {
                sink,
                printer: print::LinePrinter::new(style.detail),
                text: Vec::new(),
                stamp: String::new(),
                batching: false,
                style,
                captured: 0,
                bytes: 0,
                truncated: 0,
                error: None,
                prev_ns: None,
                first_ns: None,
                merge: None,
                stdout_ids: Vec::new(),
                plain: Plain::No,
                tee: None,
            })),
            limit,
            seen: (AtomicU64::new(0), AtomicU64::new(0)),
            by_shard: Vec::new(),
        };
        if let Some(st) = out.lock().as_mut() {
            st.plain = st.plain();
        }
        out
    }
    /// With several shards, counts what each hands to the output (one shard's count is
    /// [`Output::seen`]).
    pub(crate) fn with_shards(mut self, shards: usize) -> Self {
        if shards > 1 {
            self.by_shard = (0..shards).map(|_| AtomicU64::new(0)).collect();
        }
        self
    }

    /// Counts a packet shard `shard` hands to the output (several shards; one shard's count
    /// is [`Output::seen`]).
    pub(super) fn count_from(&self, shard: usize) {
        if let Some(n) = self.by_shard.get(shard) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Packets shard `shard` handed to the output so far.
    pub(crate) fn captured_by(&self, shard: usize) -> u64 {
        match self.by_shard.get(shard) {
            Some(n) => n.load(Ordering::Relaxed),
            None => self.seen.0.load(Ordering::Relaxed),
        }
    }

    /// The state, also after a thread panicked while it held the lock (the counters stay
    /// usable for the final report).
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Option<OutState>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Packets cut at the snapshot length so far.
    pub(crate) fn truncated(&self) -> u64 {
        self.lock().as_ref().map_or(0, |s| s.truncated)
    }
    /// Puts the packets of `shards` shards (read as `link`) in time-stamp order before they
    /// are written, each held at most `delay_ns` after its time stamp.
    pub(crate) fn merge(&self, shards: usize, delay_ns: u64, link: LinkType) {
        if let Some(st) = self.lock().as_mut() {
            st.merge = Some((Merge::new(shards, delay_ns), link));
            st.plain = st.plain();
        }
    }

    /// `--pcap-over-ip`: every packet from now on also goes to `tee` (off the short paths).
    pub(crate) fn tee(&self, tee: SaveFile<TeeSink>) {
        if let Some(st) = self.lock().as_mut() {
            st.tee = Some((tee, Vec::new()));
            st.plain = st.plain();
        }
    }

    /// Packets written after one with a later time stamp (the merge's delay was exceeded).
    pub(crate) fn late(&self) -> u64 {
        self.lock()
            .as_ref()
            .and_then(|s| s.merge.as_ref())
            .map_or(0, |m| m.0.late)
    }

    /// Once in a while on an idle link: the merged packets whose delay has passed, and the
    /// time rotation of `-G`. Returns false when the capture must stop (`-W` files written,
    /// the count reached, or a file could not be written, closed or created).
    pub(crate) fn tick(&self) -> bool {
        let mut guard = self.lock();
        let Some(st) = guard.as_mut() else {
            return true;
        };
        st.drain_merge(self, false) && st.tick()
    }

    /// [`OutState::write`] of shard `shard`'s packet, through the merge if there is one.
    pub(crate) fn write_from(&self, shard: usize, link: LinkType, rec: &Record<'_>) -> bool {
        let mut guard = self.lock();
        let Some(st) = guard.as_mut() else {
            return false;
        };
        match st.merge.as_mut() {
            Some((m, _)) => {
                m.push(shard, rec);
                st.drain_merge(self, false)
            }
            None => st.write(self, link, rec),
        }
    }
}

impl OutState {
    /// Writes what the merge may write now (everything with `all`).
    fn drain_merge(&mut self, out: &Output, all: bool) -> bool {
        let Some((mut m, link)) = self.merge.take() else {
            return true;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let go_on = m.drain(now, all, |r| self.write(out, link, r));
        self.merge = Some((m, link));
        go_on
    }

    /// `-U` by batch (immediate mode): a capture file's records are handed over by
    /// [`OutState::end_batch`], once for every packet the ring had ready, instead of one
    /// write(2) each. No packet waits for a later one: the batch ends when the ring is empty.
    pub(crate) fn flush_by_batch(&mut self) {
        match &mut self.sink {
            Sink::File(files) => files.flush_by_batch(),
            Sink::Stdout(save) => save.set_flush_every(FLUSH_AT),
            _ => {}
        }
    }

    /// After a batch (see [`OutState::flush_by_batch`]): hands the buffered records over.
    /// Returns false when that failed (the capture must stop).
    pub(crate) fn end_batch(&mut self) -> bool {
        let r = match &mut self.sink {
            Sink::File(files) => files.flush(),
            Sink::Stdout(save) => save.flush(),
            _ => Ok(()),
        };
        match r {
            Ok(()) => true,
            Err(e) => {
                self.error.get_or_insert(e);
                false
            }
        }
    }

    /// Packets written or printed so far.
    pub(crate) fn captured(&self) -> u64 {
        self.captured
    }

    /// See [`Output::tick`].
    pub(crate) fn tick(&mut self) -> bool {
        let Sink::File(files) = &mut self.sink else {
            return true;
        };
        match files.tick() {
            Ok(Next::Go) => true,
            Ok(Next::Done) => false,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Which short path packets may take: one capture file (no rotation) or standard output
    /// ([`OutState::write_plain`]), or nothing to write (`--flows`: only the count); with no
    /// lines printed beside it and no merge of shards.
    fn plain(&self) -> Plain {
        if self.merge.is_some() || self.style.print_too || self.tee.is_some() {
            return Plain::No;
        }
        match &self.sink {
            Sink::File(files) if files.unrotated() => Plain::Save,
            Sink::Stdout(_) => Plain::Save,
            Sink::Discard => Plain::Count,
            _ => Plain::No,
        }
    }
}

/// Flushes the sink; on a write error cuts the file back to its last whole record and says
/// so. Returns (packets the output really holds or that were printed, whether it failed).
pub(crate) fn close(out: &Output) -> (u64, bool) {
    let mut guard = out.lock();
    let Some(st) = guard.as_mut() else {
        return (0, true);
    };
    // What the merge still holds goes out first, in order; then the lines not yet written.
    st.drain_merge(out, true);
    st.write_text();
    let captured = st.captured;
    let mut earlier_files = 0;
    let (committed, what, err) = match &mut st.sink {
        Sink::File(files) => {
            let what = files.current().to_string();
            let (records, written, err) = files.finish(st.error.take());
            earlier_files = written.saturating_sub(1);
            if let (n @ 1.., Some(c)) = (files.dropped(), files.compression()) {
                eprintln!(
                    "{n} packets dropped by zcap: the compressor ({}) fell behind (they are in no file)",
                    c.describe()
                );
            }
            (records, what, err)
        }
        Sink::Stdout(save) => {
            let mut err = st.error.take();
            if err.is_none() {
                err = save.flush().err();
            }
            (
                err.as_ref()
                    .map(|e| e.committed)
                    .unwrap_or(save.committed())
                    .records,
                "standard output".into(),
                err,
            )
        }
        _ => (captured, String::new(), st.error.take()),
    };
    if let Some(e) = &err {
        let full = e.source.raw_os_error() == Some(libc::ENOSPC)
            || e.source.kind() == std::io::ErrorKind::StorageFull;
        let before = if earlier_files > 0 {
            format!("; the {earlier_files} file(s) before it are complete")
        } else {
            String::new()
        };
        eprintln!(
            "zcap: writing {what} failed{}: {}; it holds the first {} packets, whole and readable{before}",
            if full { " (disk full)" } else { "" },
            e.source,
            e.committed.records
        );
    }
    (committed, err.is_some())
}

/// A delivered packet as [`SaveFile::write_many`] takes it.
#[inline(always)]
fn record<'a>(d: Delivered<'a>) -> PacketRecord<'a> {
    let m = d.meta();
    let vlan = m.vlan_tci.map(|t| (t, m.vlan_tpid));
    PacketRecord::new(m.ts_ns, m.wire_len, d.data()).with_vlan(vlan)
}

impl OutState {
    /// Counts `rec` and sends it to the sink. Returns false when the capture must stop
    /// (count reached or a write error).
    #[inline]
    pub(crate) fn write(&mut self, out: &Output, link: LinkType, rec: &Record<'_>) -> bool {
        match self.plain {
            Plain::Save if rec.ll.is_none() => self.write_plain(out, rec),
            Plain::Count if rec.ll.is_none() => self.count_frame(out, rec.wire_len, rec.data.len()),
            _ => self.write_any(out, link, rec),
        }
    }

    /// The common case of `zcap -w FILE` (see [`OutState::plain`]), with nothing on the way
    /// from the ring to the file's buffer that the packet does not need: no rotation check,
    /// no cooked header, no line, no tee.
    #[inline]
    fn write_plain(&mut self, out: &Output, rec: &Record<'_>) -> bool {
        self.save_frame(out, rec.ts_ns, rec.wire_len, rec.data, rec.vlan)
    }

    /// [`OutState::write_plain`] from the parts of a record: what
    /// [`Writer::packet`](super::Writer) calls for an untagged frame on one shard, without
    /// building a [`Record`] (the parts stay in registers on the way to the capture file's
    /// own short path).
    #[inline(always)]
    pub(super) fn save_frame(
        &mut self,
        out: &Output,
        ts_ns: u64,
        wire_len: u32,
        data: &[u8],
        vlan: Option<(u16, u16)>,
    ) -> bool {
        if self.captured >= out.limit || self.error.is_some() {
            return false;
        }
        let r = match &mut self.sink {
            Sink::File(files) => files.write(ts_ns, wire_len, data, vlan),
            Sink::Stdout(save) => save.write(ts_ns, wire_len, data, vlan),
            _ => unreachable!("Plain::Save is for files and standard output"),
        };
        if let Err(e) = r {
            self.error = Some(e);
            return false;
        }
        self.count(out, wire_len, data.len())
    }

    /// [`OutState::save_frame`] of several packets, whose bytes all live until this returns:
    /// [`SaveFile::write_many`] refers to the large ones in place (one copy, the kernel's,
    /// instead of two). Stops at the count (-c); false once the capture must stop.
    pub(super) fn save_many<'a>(
        &mut self,
        out: &Output,
        packets: impl Iterator<Item = Delivered<'a>>,
    ) -> bool {
        if self.captured >= out.limit || self.error.is_some() {
            return false;
        }
        let left = usize::try_from(out.limit - self.captured).unwrap_or(usize::MAX);
        let mut taken = Taken::default();
        let r = if packets.size_hint().1.is_some_and(|most| most <= left) {
            // The count (-c) cannot be reached within these: no check a packet.
            self.sink.write_many(packets.map(record), &mut taken)
        } else {
            self.sink
                .write_many(packets.take(left).map(record), &mut taken)
        };
        self.captured += taken.records;
        self.bytes += taken.wire_bytes;
        self.truncated += taken.truncated;
        // After every block: SIGUSR1's count is exact once a block is done.
        out.seen.0.store(self.captured, Ordering::Relaxed);
        out.seen.1.store(self.bytes, Ordering::Relaxed);
        if let Err(e) = r {
            self.error = Some(e);
            return false;
        }
        self.captured < out.limit
    }

    /// A packet that is only counted (`--flows`, [`Plain::Count`]); false once the capture
    /// must stop.
    #[inline]
    pub(super) fn count_frame(&mut self, out: &Output, wire_len: u32, captured_len: usize) -> bool {
        self.captured < out.limit && self.error.is_none() && self.count(out, wire_len, captured_len)
    }

    /// After a packet went out: the counters, published (two stores to a line this thread
    /// owns; the status line and SIGUSR1 read them); false once the count (-c) is reached.
    #[inline]
    fn count(&mut self, out: &Output, wire_len: u32, captured_len: usize) -> bool {
        self.captured += 1;
        self.bytes += u64::from(wire_len);
        self.truncated += u64::from(wire_len as usize > captured_len);
        out.seen.0.store(self.captured, Ordering::Relaxed);
        out.seen.1.store(self.bytes, Ordering::Relaxed);
        self.captured < out.limit
    }

    /// [`OutState::write`] for every sink: rotation, cooked records, lines, files, the merge,
    /// the tee.
    fn write_any(&mut self, out: &Output, link: LinkType, rec: &Record<'_>) -> bool {
        if self.captured >= out.limit || self.error.is_some() {
            return false;
        }
        // A new file first, if one is due (-C, -G): the packet goes whole into the next.
        if let Sink::File(files) = &mut self.sink {
            match files.before_write() {
                Ok(Next::Go) => {}
                Ok(Next::Done) => return false,
                Err(e) => {
                    self.error = Some(e);
                    return false;
                }
            }
        }
        // Cooked (`-i any`): printed as the LINUX_SLL2 record it is written as.
        let sll2: Option<Vec<u8>> = rec
            .ll
            .filter(|_| {
                !matches!(self.sink, Sink::File(_) | Sink::Stdout(_)) || self.style.print_too
            })
            .map(|ll| [&sll2_header(&ll)[..], rec.data].concat());
        let shown = match &sll2 {
            Some(v) => Shown {
                link: LinkType::LinuxSll2,
                data: &v[..],
                len: rec.wire_len + 20,
            },
            None => Shown {
                link,
                data: rec.data,
                len: rec.wire_len,
            },
        };
        let text = matches!(self.sink, Sink::Text);
        if text || (self.style.print_too && matches!(self.sink, Sink::File(_))) {
            self.print_line(rec, &shown);
        }
        if let Err(e) = self.write_sink(rec, &shown) {
            self.error = Some(e);
            return false;
        }
        if let Some((tee, ids)) = self.tee.as_mut().filter(|t| t.0.get_ref().wanted()) {
            // Never fails: the server drops what it cannot take, and counts it.
            let _ = match &rec.ll {
                Some(ll) => write_cooked(tee, ids, rec, ll),
                None => tee.write(rec.ts_ns, rec.wire_len, rec.data, rec.vlan),
            };
        }
        self.count(out, rec.wire_len, rec.data.len())
    }

    /// `rec` as a text line on standard output (with its number, `-#`), shown as `shown`.
    fn print_line(&mut self, rec: &Record<'_>, shown: &Shown<'_>) {
        let ts_ns = rec.ts_ns;
        let (prev, first) = (
            self.prev_ns.unwrap_or(ts_ns),
            *self.first_ns.get_or_insert(ts_ns),
        );
        self.prev_ns = Some(ts_ns);
        self.stamp.clear();
        self.style.stamp.write(&mut self.stamp, ts_ns, prev, first);
        let line = self.printer.line(
            &self.stamp,
            shown.link,
            shown.len,
            shown.data,
            rec.vlan.map(|v| v.0),
        );
        let text = &mut self.text;
        if self.style.number {
            let _ = write!(text, "{:5}  ", self.captured + 1);
        }
        if self.style.lengths {
            let _ = write!(text, "caplen {} len {} ", shown.data.len(), shown.len);
        }
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
        let hold = self.style.block_buffered || self.batching;
        if !hold || self.text.len() >= TEXT_BUFFER {
            self.write_text();
        }
    }

    /// Lines of a block's packets: gathered from its first (`true`) and written together
    /// after its last (`false`), unless `-l` or `-U` asks for each at once.
    pub(crate) fn batch_lines(&mut self, on: bool) {
        self.batching = on && !self.style.line_buffered;
        if !on && !self.style.block_buffered {
            self.write_text();
        }
    }

    /// The gathered lines to standard output (a failed write, as a closed pipe, loses them:
    /// printing never stops a capture).
    fn write_text(&mut self) {
        if !self.text.is_empty() {
            let _ = std::io::stdout().lock().write_all(&self.text);
            self.text.clear();
        }
    }

    /// `rec` to the sink: a record of the file or standard output (cooked ones on their
    /// interface's IDB), a JSON line, or nothing (text lines are printed before).
    fn write_sink(&mut self, rec: &Record<'_>, shown: &Shown<'_>) -> Result<(), SaveError> {
        let (ts_ns, wire_len, data, vlan) = (rec.ts_ns, rec.wire_len, rec.data, rec.vlan);
        match (&mut self.sink, &rec.ll) {
            (Sink::File(files), Some(ll)) => files.write_cooked(rec, ll),
            (Sink::Stdout(save), Some(ll)) => write_cooked(save, &mut self.stdout_ids, rec, ll),
            (Sink::File(files), None) => files.write(ts_ns, wire_len, data, vlan),
            (Sink::Stdout(save), None) => save.write(ts_ns, wire_len, data, vlan),
            (Sink::Text, _) | (Sink::Discard, _) => Ok(()),
            (Sink::Json, _) => {
                let line = print::json(shown.link, ts_ns, shown.len, shown.data, vlan.map(|v| v.0));
                let _ = writeln!(std::io::stdout().lock(), "{line}");
                Ok(())
            }
        }
    }
}

/// How a packet is printed: as read (`link`), or cooked packets as LINUX_SLL2 records.
struct Shown<'a> {
    link: LinkType,
    data: &'a [u8],
    /// The length on the wire, the SLL2 header's included.
    len: u32,
}
