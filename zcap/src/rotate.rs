//! Capture files for `-w`: one file, or a series rotated by size (`-C`), by time (`-G`) or
//! both, kept to a ring of `-W` files, each closed file handed to `-z COMMAND` — named and
//! numbered exactly as tcpdump 4.99 names them for the same flags:
//!
//! - `-C` alone: `NAME`, `NAME1`, `NAME2`, ...; with `-W N`: `NAME0` .. `NAME{N-1}` with as
//!   many digits as N-1 has, then `NAME0` again (a ring).
//! - `-G S`: `NAME` run through strftime(3) at each rotation (local time); with `-C` as well,
//!   the number is appended to that. `-W N` with `-G` (and no `-C`) stops after N files:
//!   "Maximum file limit reached: N", exit 0.
//! - A file is closed before the packet that would be written when it is already larger than
//!   `-C` (so files end just over the size, never with a split record), or when `-G` seconds
//!   have passed since the last rotation. Unlike tcpdump, which only looks at the clock when
//!   a packet arrives, the time rotation also happens on an idle link (the caller calls
//!   [`Files::tick`]).
//! - `-z COMMAND` runs as `COMMAND FILE` on every file closed by a rotation (not on the last
//!   file when the capture ends, as tcpdump); zcap waits for these commands before exiting.
//! - A name ending in `.gz`, `.zst` or `.lz4` (or `--compress`) compresses every file as it is
//!   written ([`crate::compress`]); `-C` counts the bytes before compression.

use std::fs::File;
use std::io::{IoSlice, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use zcrx_capture::pcapfile::{
    Committed, Format, PacketRecord, SaveError, SaveFile, Taken, FLUSH_AT,
};

use crate::compress::{Compressed, Compression};
use crate::metrics;
use crate::system::strftime_local;

/// The rotation the command line asks for (all `None`: one file).
#[derive(Debug, Clone, Default)]
pub(crate) struct Rotation {
    /// `-C`: bytes.
    pub(crate) size: Option<u64>,
    /// `-W`.
    pub(crate) count: Option<u32>,
    /// `-G`: seconds.
    pub(crate) seconds: Option<u64>,
    /// `-z`.
    pub(crate) post: Option<String>,
    /// `-U`: every packet handed to the file as it is written (a write per packet).
    pub(crate) packet_buffered: bool,
    /// `--compress`, or what the `-w` name's extension asks for.
    pub(crate) compress: Option<Compression>,
    /// Reading a file (-r): the compressor is waited for, never dropped from.
    pub(crate) lossless: bool,
}

impl Rotation {
    /// Digits of the file number: those of `-W` - 1 (tcpdump's getWflagChars), 0 without -W.
    fn digits(&self) -> usize {
        let mut x = self.count.map_or(0, |c| c.saturating_sub(1));
        let mut d = 0;
        while x > 0 {
            d += 1;
            x /= 10;
        }
        d
    }
}

/// `-C SIZE`: millions of bytes as tcpdump 4.99.3; a `k`, `m` or `g` suffix (KiB, MiB, GiB)
/// as later tcpdump releases accept.
pub(crate) fn parse_size(s: &str) -> Result<u64> {
    let (num, mult) = match s.char_indices().last() {
        Some((i, 'k' | 'K')) => (&s[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&s[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&s[..i], 1 << 30),
        _ => (s, 1_000_000),
    };
    let n: u64 = num.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
        anyhow::anyhow!(
            "-C {s}: invalid file size (a whole number of millions of bytes, or with k, m or g)"
        )
    })?;
    n.checked_mul(mult)
        .ok_or_else(|| anyhow::anyhow!("-C {s}: file size is too large"))
}

/// tcpdump's MakeFilename: the template (through strftime with `-G`), then the number unless
/// it is 0 with no `-W` digits.
fn file_name(
    template: &str,
    rotation: &Rotation,
    when: i64,
    number: u32,
    digits: usize,
) -> Result<String> {
    let base = if rotation.seconds.is_some() {
        strftime_local(template, when)?
    } else {
        template.to_string()
    };
    Ok(if number == 0 && digits == 0 {
        base
    } else {
        format!("{base}{number:0digits$}")
    })
}

/// A capture file's writer; with `-U` it hands every record over as it is written.
pub(crate) fn new_save<W: std::io::Write>(
    out: W,
    format: Format,
    linktype: u32,
    snaplen: u32,
    packet_buffered: bool,
) -> SaveFile<W> {
    let save = SaveFile::new(out, format, linktype, snaplen);
    if packet_buffered {
        save.flush_every(1)
    } else {
        save
    }
}

/// A capture file's bytes go to the file, or to its compressor's writer thread.
pub(crate) enum FileOut {
    Plain(File),
    Compressed(Box<Compressed>),
}

impl FileOut {
    fn create(name: &str, rotation: &Rotation, format: Format) -> std::io::Result<FileOut> {
        let f = File::create(name)?;
        metrics::add(&metrics::EVENTS.files, 1);
        Ok(match rotation.compress {
            None => FileOut::Plain(f),
            Some(c) => {
                let mut c = Compressed::start(f, c, format, rotation.lossless)?;
                c.immediate = rotation.packet_buffered;
                FileOut::Compressed(Box::new(c))
            }
        })
    }
}

/// A write's result, its bytes counted for `--metrics` (a compressed file's writer thread
/// counts its own).
pub(crate) fn written(r: std::io::Result<usize>) -> std::io::Result<usize> {
    if let Ok(n) = r {
        metrics::add(&metrics::EVENTS.written_bytes, n as u64);
    }
    r
}

impl Write for FileOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            FileOut::Plain(f) => written(f.write(buf)),
            FileOut::Compressed(c) => c.write(buf),
        }
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
        match self {
            FileOut::Plain(f) => written(f.write_vectored(bufs)),
            FileOut::Compressed(c) => c.write_vectored(bufs),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            FileOut::Plain(f) => f.flush(),
            FileOut::Compressed(c) => c.flush(),
        }
    }
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// What a write or a tick decided.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Go on.
    Go,
    /// `-W` files written with `-G`: the capture ends (exit 0).
    Done,
}

/// The files of a `-w` capture: the one being written and what the closed ones held.
pub(crate) struct Files {
    template: String,
    rotation: Rotation,
    format: Format,
    linktype: u32,
    snaplen: u32,
    /// `None` after `-W` files with `-G`.
    save: Option<SaveFile<FileOut>>,
    name: String,
    /// tcpdump's Cflag_count and Gflag_count, and the time of the last rotation.
    c_count: u32,
    g_count: u32,
    g_time: i64,
    /// Packets in the files closed so far, and how many files.
    closed_records: u64,
    closed_files: u64,
    /// Packets the compressor's writer could not take in time (dropped, not in any file).
    dropped: u64,
    /// `-i any` in pcapng: the current file's interface index to IDB id.
    ids: Vec<(u32, u32)>,
}

impl Files {
    /// Creates the first file.
    pub(crate) fn create(
        template: &str,
        rotation: Rotation,
        format: Format,
        linktype: u32,
        snaplen: u32,
    ) -> Result<Files> {
        let g_time = now_seconds();
        let digits = if rotation.size.is_some() {
            rotation.digits()
        } else {
            0
        };
        let name = file_name(template, &rotation, g_time, 0, digits)?;
        let f = FileOut::create(&name, &rotation, format)
            .map_err(|e| anyhow::anyhow!("cannot create {name}: {e}"))?;
        let mut save = new_save(f, format, linktype, snaplen, rotation.packet_buffered);
        // The header goes to the file at once: a zcap killed before its first hand-over
        // leaves a file that reads (with no packets), not an empty one.
        save.flush()
            .map_err(|e| anyhow::anyhow!("writing {name}: {}", e.source))?;
        Ok(Files {
            template: template.to_string(),
            rotation,
            format,
            linktype,
            snaplen,
            save: Some(save),
            name,
            c_count: 0,
            g_count: 0,
            g_time,
            closed_records: 0,
            closed_files: 0,
            dropped: 0,
            ids: Vec::new(),
        })
    }

    /// `-U` by batch: from now on this file and the next are handed over when
    /// [`Files::flush`] is called (and every 256 KiB), not after each record.
    pub(crate) fn flush_by_batch(&mut self) {
        self.rotation.packet_buffered = false;
        if let Some(save) = &mut self.save {
            save.set_flush_every(FLUSH_AT);
            if let FileOut::Compressed(c) = save.get_mut() {
                c.immediate = false;
            }
        }
    }

    /// Hands the current file's buffered records to the file.
    pub(crate) fn flush(&mut self) -> Result<(), SaveError> {
        match &mut self.save {
            Some(save) => save.flush(),
            None => Ok(()),
        }
    }

    /// No rotation by size or time: every packet goes to the one file.
    pub(crate) fn unrotated(&self) -> bool {
        self.rotation.size.is_none() && self.rotation.seconds.is_none()
    }

    /// The file being written.
    pub(crate) fn current(&self) -> &str {
        &self.name
    }

    /// Before writing a packet: rotates by time, then by size, as due.
    pub(crate) fn before_write(&mut self) -> Result<Next, SaveError> {
        if self.tick()? == Next::Done {
            return Ok(Next::Done);
        }
        if let (Some(limit), Some(save)) = (self.rotation.size, &self.save) {
            if save.position() > limit {
                self.close_current(true)?;
                self.c_count += 1;
                if self.rotation.count.is_some_and(|w| self.c_count >= w) {
                    self.c_count = 0;
                }
                let name = self.name_for(self.c_count);
                self.open(name)?;
            }
        }
        Ok(Next::Go)
    }

    /// The time rotation, also called on an idle link: when `-G` seconds have passed since
    /// the last one, closes the file and opens the next (or ends at `-W` files).
    pub(crate) fn tick(&mut self) -> Result<Next, SaveError> {
        let Some(period) = self.rotation.seconds else {
            return Ok(Next::Go);
        };
        if self.save.is_none() {
            return Ok(Next::Done);
        }
        let now = now_seconds();
        if now - self.g_time < period as i64 {
            return Ok(Next::Go);
        }
        self.g_time = now;
        self.g_count += 1;
        self.close_current(true)?;
        if let (None, Some(w)) = (self.rotation.size, self.rotation.count) {
            if self.g_count >= w {
                eprintln!("Maximum file limit reached: {w}");
                return Ok(Next::Done);
            }
        }
        self.c_count = 0;
        let name = self.name_for(0);
        self.open(name)?;
        Ok(Next::Go)
    }

    /// File name number `n` of the current period.
    fn name_for(&self, n: u32) -> String {
        let digits = if self.rotation.size.is_some() {
            self.rotation.digits()
        } else {
            0
        };
        // The template was checked through strftime when the first file was created.
        file_name(&self.template, &self.rotation, self.g_time, n, digits)
            .unwrap_or_else(|_| self.template.clone())
    }

    fn open(&mut self, name: String) -> Result<(), SaveError> {
        let f = FileOut::create(&name, &self.rotation, self.format).map_err(|source| {
            SaveError::new(
                std::io::Error::new(source.kind(), format!("cannot create {name}: {source}")),
                Committed::default(),
            )
        })?;
        let mut save = new_save(
            f,
            self.format,
            self.linktype,
            self.snaplen,
            self.rotation.packet_buffered,
        );
        // The header at once, as for the first file (a failure here holds no records).
        save.flush()?;
        self.save = Some(save);
        self.name = name;
        self.ids.clear();
        Ok(())
    }

    /// Flushes and closes the current file; runs `-z` on it after a rotation. A failed flush
    /// cuts the file back to its last whole record and is returned.
    fn close_current(&mut self, rotated: bool) -> Result<(), SaveError> {
        let Some(save) = self.save.take() else {
            return Ok(());
        };
        self.end_file(save, None)?;
        self.closed_files += 1;
        if rotated {
            self.run_hook();
        }
        Ok(())
    }

    /// Ends a file: flushed (unless a write to it already `failed`), a compressed stream
    /// finished; after a failure cut back to whole records. Counts the packets it holds.
    fn end_file(
        &mut self,
        mut save: SaveFile<FileOut>,
        failed: Option<SaveError>,
    ) -> Result<(), SaveError> {
        let failed = match failed {
            Some(e) => Some(e),
            None => save.flush().err(),
        };
        match save.get_mut() {
            FileOut::Plain(f) => {
                let Some(e) = failed else {
                    self.closed_records += save.committed().records;
                    return Ok(());
                };
                let _ = f.set_len(e.committed.bytes);
                self.closed_records += e.committed.records;
                Err(e)
            }
            FileOut::Compressed(c) => {
                // What the writer thread wrote whole is what the file holds (it cut the file
                // back itself if a write failed).
                let closed = c.finish();
                self.closed_records += closed.records;
                self.dropped += closed.dropped;
                match failed.map(|e| e.source).or(closed.error) {
                    None => Ok(()),
                    Some(source) => Err(SaveError::new(
                        source,
                        Committed::new(closed.bytes, closed.records),
                    )),
                }
            }
        }
    }

    /// Packets dropped because a compressor's writer fell behind (none without compression).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The files' compression, if any.
    pub(crate) fn compression(&self) -> Option<Compression> {
        self.rotation.compress
    }

    /// Runs `-z` on the file just closed, through the hook runner ([`crate::hooks`]).
    fn run_hook(&mut self) {
        if self.rotation.post.is_some() {
            crate::hooks::run(&self.name);
        }
    }

    /// Writes one cooked packet (`-i any`) to the current file.
    pub(crate) fn write_cooked(
        &mut self,
        rec: &crate::record::Record<'_>,
        ll: &zcrx_ring::LinkAddr,
    ) -> Result<(), SaveError> {
        match &mut self.save {
            Some(s) => crate::record::write_cooked(s, &mut self.ids, rec, ll),
            None => Ok(()),
        }
    }

    /// Writes packets to the current file ([`SaveFile::write_many`]: large frames in place).
    pub(crate) fn write_many<'a>(
        &mut self,
        records: impl Iterator<Item = PacketRecord<'a>>,
        taken: &mut Taken,
    ) -> Result<(), SaveError> {
        match &mut self.save {
            Some(s) => s.write_many(records, taken),
            None => Ok(()),
        }
    }

    /// Writes one packet to the current file.
    #[inline]
    pub(crate) fn write(
        &mut self,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
        vlan: Option<(u16, u16)>,
    ) -> Result<(), SaveError> {
        match &mut self.save {
            Some(s) => s.write(ts_ns, orig_len, data, vlan),
            None => Ok(()),
        }
    }

    /// Ends the capture: flushes the last file (cut back to whole records on a failed
    /// write), waits for the `-z` commands. Returns the packets all files hold, the files
    /// written, and the error (`failed` is the error of the write that stopped the capture,
    /// if any, whose file is cut back here).
    pub(crate) fn finish(&mut self, failed: Option<SaveError>) -> (u64, u64, Option<SaveError>) {
        let err = match failed {
            // A file still open failed while being written: cut it back and count what it
            // holds. With none open, the failure was a rotation's (closing counted that
            // file's records) or creating the next file (which holds none).
            Some(e) => match self.save.take() {
                Some(save) => self.end_file(save, Some(e)).err(),
                None => Some(e),
            },
            None => self.close_current(false).err(),
        };
        if self.rotation.post.is_some() {
            crate::hooks::finish();
        }
        let files = self.closed_files + u64::from(err.is_some());
        (self.closed_records, files, err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_millions_of_bytes_or_binary_units() {
        assert_eq!(parse_size("1").unwrap(), 1_000_000);
        assert_eq!(parse_size("10").unwrap(), 10_000_000);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        for bad in ["0", "", "k", "1.5", "-1", "1t", "99999999999999999999"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert!(parse_size("18446744073709551615g").is_err());
    }

    #[test]
    fn names_follow_tcpdump() {
        let r = |count| Rotation {
            size: Some(1),
            count,
            ..Default::default()
        };
        assert_eq!(r(None).digits(), 0);
        assert_eq!(r(Some(1)).digits(), 0);
        assert_eq!(r(Some(3)).digits(), 1);
        assert_eq!(r(Some(10)).digits(), 1);
        assert_eq!(r(Some(11)).digits(), 2);
        assert_eq!(r(Some(101)).digits(), 3);
        let plain = r(None);
        assert_eq!(file_name("out", &plain, 0, 0, 0).unwrap(), "out");
        assert_eq!(file_name("out", &plain, 0, 12, 0).unwrap(), "out12");
        assert_eq!(file_name("out", &plain, 0, 0, 2).unwrap(), "out00");
        assert_eq!(file_name("out", &plain, 0, 7, 2).unwrap(), "out07");
        let timed = Rotation {
            seconds: Some(60),
            ..Default::default()
        };
        assert_eq!(
            file_name("t-%s", &timed, 1_796_059_133, 0, 0).unwrap(),
            "t-1796059133"
        );
        assert_eq!(
            file_name("t-%s", &timed, 1_796_059_133, 3, 1).unwrap(),
            "t-17960591333"
        );
    }
}
