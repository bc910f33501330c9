//! Where packets go (a pcap/pcapng file, standard output, text or JSON lines, nowhere) and
//! how many went: the sink, its counters, the consumer that writes to it, and the final
//! flush that keeps a file valid after a write error.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use zcrx_capture::pcapfile::{Format, SaveError, SaveFile, Taken, FLUSH_AT};
use zcrx_flowcache::LinkType;

mod write;
mod writer;

pub(crate) use writer::Writer;

use crate::merge::Merge;
use crate::pcap_over_ip::TeeSink;
use crate::print;
use crate::record::Record;
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

/// Where the packets of a capture go (see [`Sink`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// `-w FILE`.
    File(String),
    /// `-w -`.
    Stdout,
    /// Lines as tcpdump prints them.
    Text,
    /// `--json`.
    Json,
    /// Nothing per packet: the flows are the output (`--flows`, `--ipfix`, `--count`).
    Discard,
}

/// The sink a capture asks for: where packets go, as what, rotated how, and how its text
/// lines look.
#[derive(Debug, Clone)]
pub(crate) struct SinkConfig {
    pub(crate) to: Destination,
    /// `--pcapng` or pcap.
    pub(crate) format: Format,
    /// `-C`, `-G`, `-W`, `-z`, compression (for `-w FILE`).
    pub(crate) rotation: Rotation,
    /// `-U`: every record handed over as it is written.
    pub(crate) packet_buffered: bool,
    pub(crate) style: TextStyle,
}

/// The sink `config` asks for, for packets of `linktype` cut at `snaplen` (a file is
/// created now).
pub(crate) fn open_sink(config: &SinkConfig, linktype: u32, snaplen: u32) -> Result<Sink> {
    Ok(match &config.to {
        Destination::Stdout => Sink::Stdout(crate::rotate::new_save(
            StdoutWriter,
            config.format,
            linktype,
            snaplen,
            config.packet_buffered,
        )),
        Destination::File(path) => Sink::File(Box::new(Files::create(
            path,
            config.rotation.clone(),
            config.format,
            linktype,
            snaplen,
        )?)),
        Destination::Text => Sink::Text,
        Destination::Json => Sink::Json,
        Destination::Discard => Sink::Discard,
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
