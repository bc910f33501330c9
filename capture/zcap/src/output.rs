//! Where packets go (a pcap/pcapng file, standard output, text or JSON lines, nowhere) and
//! how many went: the sink, its counters, the consumer that writes to it, and the final
//! flush that keeps a file valid after a write error.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use zcrx_capture::pcapfile::{Format, SaveError, SaveFile, Taken, FLUSH_AT};
use zcrx_capture::{Consumer, Delivered, StopToken};
use zcrx_flowcache::LinkType;

use crate::args::Args;
use crate::merge::Merge;
use crate::pcap_over_ip::TeeSink;
use crate::print;
use crate::record::{sll2_header, write_cooked, Record, ARPHRD_LOOPBACK};
use crate::rotate::{Files, Next, Rotation};

/// Where packets go.
pub(crate) enum Sink {
    /// A pcap or pcapng file, or a rotated series of them.
    File(Box<Files>),
    /// pcap or pcapng on standard output (`-w -`).
    Stdout(SaveFile<StdoutWriter>),
    /// One line per packet, like `tcpdump -n -q`.
    Text,
    /// One JSON object per packet.
    Json,
    /// Nothing per packet (`--flows` only shows the flow table).
    Discard,
}

impl Sink {
    /// [`SaveFile::write_many`] on the file or standard output ([`Plain::Save`]).
    #[inline]
    fn write_many<'a>(
        &mut self,
        records: impl Iterator<Item = (u64, u32, &'a [u8], Option<(u16, u16)>)>,
        taken: &mut Taken,
    ) -> Result<(), SaveError> {
        match self {
            Sink::File(files) => files.write_many(records, taken),
            Sink::Stdout(save) => save.write_many(records, taken),
            _ => unreachable!("Plain::Save is for files and standard output"),
        }
    }
}

/// A delivered packet as [`SaveFile::write_many`] takes it.
#[inline(always)]
fn record<'a>(d: Delivered<'a>) -> (u64, u32, &'a [u8], Option<(u16, u16)>) {
    let m = d.meta();
    let vlan = m.vlan_tci.map(|t| (t, m.vlan_tpid));
    (m.ts_ns, m.wire_len, d.data(), vlan)
}

/// How text lines look: time stamps, packet numbers, and whether lines are printed beside
/// a file written with `-w` (`--print`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TextStyle {
    pub(crate) stamp: print::Stamp,
    pub(crate) number: bool,
    pub(crate) print_too: bool,
    pub(crate) detail: print::Detail,
}

/// The sink and its counters, behind one lock (one lock per packet, no other shared write).
pub(crate) struct OutState {
    sink: Sink,
    style: TextStyle,
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
    plain: Plain,
    /// `--pcap-over-ip`: every packet written also as a pcap record for the clients (with
    /// `-i any`'s interface ids).
    tee: Option<(SaveFile<TeeSink>, InterfaceIds)>,
}

/// pcapng interface ids by interface index (`-i any`'s records, see `record::write_cooked`).
type InterfaceIds = Vec<(u32, u32)>;

/// The short paths of [`OutState::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plain {
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
    pub(crate) fn new(sink: Sink, style: TextStyle, limit: u64) -> Self {
        let out = Output {
            state: Mutex::new(Some(OutState {
                sink,
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

    /// Packets shard `shard` handed to the output so far.
    pub(crate) fn captured_by(&self, shard: usize) -> u64 {
        match self.by_shard.get(shard) {
            Some(n) => n.load(Ordering::Relaxed),
            None => self.seen.0.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Option<OutState>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
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

/// One shard's consumer: writes each packet to the sink and stops every shard (one token)
/// when the count is reached or the sink fails. With one shard it borrows the sink for the
/// run (no lock per packet); with several, the shards share it behind the lock.
pub(crate) struct Writer<'a> {
    pub(crate) out: &'a Output,
    /// How to read the frames for text and JSON lines.
    pub(crate) link: LinkType,
    pub(crate) own: Option<&'a mut OutState>,
    pub(crate) stop: StopToken,
    /// The shard this consumer reads (for the merge of several).
    pub(crate) shard: usize,
    /// `-i any`: the ring is cooked; packets carry their link layer in the metadata.
    pub(crate) cooked: bool,
    /// `-i lo`: drop the outgoing copies (the sockaddr_ll is read for that).
    pub(crate) loopback: bool,
}

impl Consumer for Writer<'_> {
    type Output = ();
    #[inline(always)]
    fn packet(&mut self, d: &Delivered<'_>) {
        let m = d.meta();
        // One shard, no link-layer address needed: `zcap -w FILE` sends an untagged frame
        // straight to the file's buffer, `zcap --flows` only counts it.
        if let Some(st) = self
            .own
            .as_deref_mut()
            .filter(|_| !(self.cooked || self.loopback))
        {
            let go_on = match st.plain {
                Plain::Save if m.vlan_tci.is_none() => {
                    st.save_frame(self.out, m.ts_ns, m.wire_len, d.data(), None)
                }
                Plain::Count => st.count_frame(self.out, m.wire_len, d.data().len()),
                _ => return self.packet_any(d),
            };
            if !go_on {
                self.stop.stop();
            }
            return;
        }
        self.packet_any(d);
    }
    /// `zcap -w FILE` on one shard: the packets of a block (or batch) go to the file
    /// together, large frames straight from the ring with one `writev`.
    fn packets<'a>(&mut self, packets: impl Iterator<Item = Delivered<'a>>) {
        let plain = !(self.cooked || self.loopback);
        match self.own.as_deref_mut() {
            Some(st) if plain && st.plain == Plain::Save => {
                if !st.save_many(self.out, packets) {
                    self.stop.stop();
                }
            }
            _ => packets.for_each(|d| self.packet(&d)),
        }
    }
    /// `zcap --flows -w FILE` on one shard: whole steered blocks, so that large frames go
    /// to the file as they do without flows (one `writev` from the ring, no copy).
    fn wants_steered_blocks(&self) -> bool {
        let plain = !(self.cooked || self.loopback);
        plain
            && self
                .own
                .as_deref()
                .is_some_and(|st| st.plain == Plain::Save)
    }
    fn finish(self) {}
}

impl Writer<'_> {
    /// [`Writer::packet`] for every other case (tagged, cooked or loopback frames, several
    /// shards, lines, rotation), out of line so that the short path keeps few registers.
    #[inline(never)]
    fn packet_any(&mut self, d: &Delivered<'_>) {
        let m = d.meta();
        // What this host sends over loopback comes back as received: libpcap keeps only the
        // received copy, and so does zcap (`-i any`; on `-i lo` the kernel gives one copy).
        let link = if self.cooked || self.loopback {
            d.link()
        } else {
            None
        };
        if link.is_some_and(|l| l.outgoing() && l.hatype == ARPHRD_LOOPBACK) {
            return;
        }
        let rec = Record {
            ts_ns: m.ts_ns,
            wire_len: m.wire_len,
            data: d.data(),
            vlan: m.vlan_tci.map(|t| (t, m.vlan_tpid)),
            ll: link.filter(|_| self.cooked),
        };
        let go_on = match self.own.as_deref_mut() {
            Some(st) => st.write(self.out, self.link, &rec),
            None => {
                if let Some(n) = self.out.by_shard.get(self.shard) {
                    n.fetch_add(1, Ordering::Relaxed);
                }
                self.out.write_from(self.shard, self.link, &rec)
            }
        };
        if !go_on {
            self.stop.stop();
        }
    }
}

/// The text line style the command line asks for.
pub(crate) fn text_style(args: &Args) -> Result<TextStyle> {
    Ok(TextStyle {
        stamp: args.stamp()?,
        number: args.number,
        print_too: args.print,
        detail: print::Detail {
            link: args.link_header,
            verbose: args.verbose,
            hex: args.hex,
            hex_ascii: args.hex_ascii,
            ascii: args.ascii,
        },
    })
}

pub(crate) fn open_sink(args: &Args, linktype: u32, snaplen: u32) -> Result<Sink> {
    let format = if args.pcapng {
        Format::PcapNg
    } else {
        Format::Pcap
    };
    let rotation = Rotation::from_args(args)?;
    Ok(match args.write.as_deref() {
        Some("-") => Sink::Stdout(crate::rotate::new_save(
            StdoutWriter,
            format,
            linktype,
            snaplen,
            args.packet_buffered,
        )),
        Some(path) => Sink::File(Box::new(Files::create(
            path, rotation, format, linktype, snaplen,
        )?)),
        // The flows are the output: the flow table, or the export.
        None if args.flows || args.exports() || args.count_only => Sink::Discard,
        None if args.json => Sink::Json,
        None => Sink::Text,
    })
}

/// Standard output for capture files: what the capture file's own buffer hands over goes
/// straight to the file descriptor in one write(2) (std's stdout is line-buffered, which
/// would hold binary records back until a newline byte passes, or split them in two writes).
pub(crate) struct StdoutWriter;

impl Write for StdoutWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        loop {
            match nix::unistd::write(std::io::stdout(), buf) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => return crate::rotate::written(r.map_err(std::io::Error::from)),
            }
        }
    }
    /// One writev(2) for the record headers and the frames `SaveFile::write_many` hands
    /// over in place (the default would make a write(2) of each piece).
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        loop {
            match nix::sys::uio::writev(std::io::stdout(), bufs) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => return crate::rotate::written(r.map_err(std::io::Error::from)),
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
    /// from the ring to the file's buffer that the packet does not need (the general path
    /// costs 289 instructions a packet, callgrind; this one about half).
    #[inline]
    fn write_plain(&mut self, out: &Output, rec: &Record<'_>) -> bool {
        self.save_frame(out, rec.ts_ns, rec.wire_len, rec.data, rec.vlan)
    }

    /// [`OutState::write_plain`] from the parts of a record: what [`Writer::packet`] calls
    /// for an untagged frame on one shard without building a [`Record`] (with the capture
    /// file's own short path, 163 -> 118 instructions a packet, callgrind).
    #[inline(always)]
    fn save_frame(
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
    fn save_many<'a>(
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
    fn count_frame(&mut self, out: &Output, wire_len: u32, captured_len: usize) -> bool {
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

    /// [`OutState::write`] for every sink — rotation, cooked records, lines, files, the
    /// merge. (A little over a screen: the general per-packet path kept in one function.)
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
        let Record {
            ts_ns,
            wire_len,
            data,
            vlan,
            ll,
        } = *rec;
        // Cooked (`-i any`): printed as the LINUX_SLL2 record it is written as.
        let sll2: Option<Vec<u8>> = ll
            .filter(|_| {
                !matches!(self.sink, Sink::File(_) | Sink::Stdout(_)) || self.style.print_too
            })
            .map(|ll| [&sll2_header(&ll)[..], data].concat());
        let (link, data_shown, len_shown) = match &sll2 {
            Some(v) => (LinkType::LinuxSll2, &v[..], wire_len + 20),
            None => (link, data, wire_len),
        };
        let print_line = |st: &mut OutState| {
            let (prev, first) = (
                st.prev_ns.unwrap_or(ts_ns),
                *st.first_ns.get_or_insert(ts_ns),
            );
            st.prev_ns = Some(ts_ns);
            let stamp = st.style.stamp.format(ts_ns, prev, first);
            let line = print::line_stamped(
                &stamp,
                link,
                len_shown,
                data_shown,
                vlan.map(|v| v.0),
                &st.style.detail,
            );
            let mut out = std::io::stdout().lock();
            if st.style.number {
                let _ = write!(out, "{:5}  ", st.captured + 1);
            }
            let _ = writeln!(out, "{line}");
        };
        let text = matches!(self.sink, Sink::Text);
        if text || (self.style.print_too && matches!(self.sink, Sink::File(_))) {
            print_line(self);
        }
        let r = match (&mut self.sink, &ll) {
            (Sink::File(files), Some(ll)) => files.write_cooked(rec, ll),
            (Sink::Stdout(save), Some(ll)) => write_cooked(save, &mut self.stdout_ids, rec, ll),
            (Sink::File(files), None) => files.write(ts_ns, wire_len, data, vlan),
            (Sink::Stdout(save), None) => save.write(ts_ns, wire_len, data, vlan),
            (Sink::Text, _) => Ok(()),
            (Sink::Json, _) => {
                let line = print::json(link, ts_ns, len_shown, data_shown, vlan.map(|v| v.0));
                let _ = writeln!(std::io::stdout().lock(), "{line}");
                Ok(())
            }
            (Sink::Discard, _) => Ok(()),
        };
        if let Err(e) = r {
            self.error = Some(e);
            return false;
        }
        if let Some((tee, ids)) = self.tee.as_mut().filter(|t| t.0.get_ref().wanted()) {
            // Never fails: the server drops what it cannot take, and counts it.
            let _ = match &ll {
                Some(ll) => write_cooked(tee, ids, rec, ll),
                None => tee.write(ts_ns, wire_len, data, vlan),
            };
        }
        self.count(out, rec.wire_len, rec.data.len())
    }
}

/// Flushes the sink; on a write error cuts the file back to its last whole record and says
/// so. Returns (packets the output really holds or that were printed, whether it failed).
pub(crate) fn close(out: &Output) -> (u64, bool) {
    let mut guard = out.lock();
    let Some(st) = guard.as_mut() else {
        return (0, true);
    };
    // What the merge still holds goes out first, in order.
    st.drain_merge(out, true);
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
