//! Capture files compressed as they are written: `-w FILE.gz`, `.zst`, `.lz4`, or
//! `--compress gzip|zstd|lz4[:LEVEL]` whatever the name.
//!
//! The capture thread never compresses. [`Compressed`] gathers what the capture file's own
//! buffer hands over (always whole records) into chunks of [`CHUNK`] bytes and queues each
//! for a writer thread of its own, which compresses it into the file's one stream (gzip
//! member, Zstandard frame, LZ4 frame) and flushes the compressor at the chunk's end, so that
//! everything up to the last chunk written decodes even if zcap is killed. While the queue ([`QUEUE`] chunks) has room the capture thread
//! never waits; when it has none the chunk is dropped and its packets counted (zcap reports
//! them at the end) — the ring is never held up silently. A chunk that holds more than
//! packets (the file header, a pcapng interface block for `-i any`) is never dropped: for
//! those the capture thread waits.
//!
//! A failed write (a full disk) cuts the file back to the last flush and writes the few bytes
//! that end the stream there: a complete compressed file of whole records; the next
//! hand-over returns the error, and the capture stops as it does for an uncompressed file.

use std::fs::File;
use std::io::{self, IoSlice, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{bail, Result};
use zcrx_capture::pcapfile::Format;

/// The compressor of a `-w` file's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// gzip (RFC 1952; flate2), what `zcat` and every Wireshark read.
    Gzip,
    /// Zstandard (RFC 8878; the zstd library).
    Zstd,
    /// LZ4 frames (lz4_flex), what `lz4cat` reads.
    Lz4,
}

/// A compressor and its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compression {
    pub(crate) codec: Codec,
    /// gzip 0-9 (default 6), zstd 1-19 (default 3); LZ4 has none.
    pub(crate) level: Option<i32>,
}

impl Compression {
    /// The compression a file name asks for by its extension, if any.
    pub(crate) fn from_name(name: &str) -> Option<Compression> {
        let codec = if name.ends_with(".gz") {
            Codec::Gzip
        } else if name.ends_with(".zst") {
            Codec::Zstd
        } else if name.ends_with(".lz4") {
            Codec::Lz4
        } else {
            return None;
        };
        Some(Compression { codec, level: None })
    }

    /// `--compress gzip|zstd|lz4[:LEVEL]`.
    pub(crate) fn parse(s: &str) -> Result<Compression> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => {
                let l: i32 = l
                    .parse()
                    .map_err(|_| anyhow::anyhow!("--compress {s}: the level must be a number"))?;
                (n, Some(l))
            }
            None => (s, None),
        };
        let codec = match name {
            "gzip" | "gz" => Codec::Gzip,
            "zstd" | "zst" => Codec::Zstd,
            "lz4" => Codec::Lz4,
            _ => bail!("--compress {s}: gzip, zstd or lz4 (with :LEVEL for gzip and zstd)"),
        };
        match (codec, level) {
            (Codec::Gzip, Some(l)) if !(0..=9).contains(&l) => {
                bail!("--compress {s}: gzip levels are 0-9")
            }
            (Codec::Zstd, Some(l)) if !(1..=19).contains(&l) => {
                bail!("--compress {s}: zstd levels are 1-19")
            }
            (Codec::Lz4, Some(_)) => {
                bail!("--compress {s}: lz4 has no levels here (lz4_flex compresses at one speed)")
            }
            _ => {}
        }
        Ok(Compression { codec, level })
    }

    /// As `--compress` takes it.
    pub(crate) fn describe(&self) -> String {
        let name = match self.codec {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
        };
        match self.level {
            Some(l) => format!("{name}:{l}"),
            None => name.to_string(),
        }
    }
}

/// Bytes gathered before a chunk is queued for the writer thread: one hand-over of the
/// capture file's buffer (256 KiB), so a compressed file lags the capture no more than an
/// uncompressed one does.
pub(crate) const CHUNK: usize = 256 << 10;

/// Chunks queued for the writer thread at most (32 MiB of records).
pub(crate) const QUEUE: usize = 128;

/// Whole records for the writer thread.
struct Chunk {
    bytes: Vec<u8>,
    /// It starts with the file header.
    header: bool,
}

/// What the writer thread and the capture thread both see.
#[derive(Default)]
struct Shared {
    /// Packets in chunks written and flushed whole.
    written: AtomicU64,
    /// Packets in chunks dropped because the queue was full.
    dropped: AtomicU64,
    /// The writer's failure, for the next hand-over to return.
    failure: Mutex<Option<(io::ErrorKind, String)>>,
}

/// A capture file's compressed output: a [`Write`] for [`zcrx_capture::pcapfile::SaveFile`]
/// that queues whole records for its writer thread.
pub(crate) struct Compressed {
    tx: Option<SyncSender<Chunk>>,
    /// Emptied chunk buffers coming back from the writer (no allocation per chunk).
    spare: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    /// The next chunk starts with the file header.
    header: bool,
    format: Format,
    /// Wait for room rather than drop (a file read with -r: no ring to keep up with).
    lossless: bool,
    /// `-U`: every hand-over is queued at once, not gathered into a chunk.
    pub(crate) immediate: bool,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<u64>>>,
}

/// A compressed file, ended.
pub(crate) struct Closed {
    /// Packets it holds.
    pub(crate) records: u64,
    /// Packets dropped because the writer fell behind.
    pub(crate) dropped: u64,
    /// Its length, bytes.
    pub(crate) bytes: u64,
    /// Why it ended early, if it did.
    pub(crate) error: Option<io::Error>,
}

impl Compressed {
    /// Starts the writer thread for `file`. `lossless`: never drop, wait for the writer
    /// when its queue is full (for files read with -r, where nothing is lost by waiting).
    pub(crate) fn start(
        file: File,
        how: Compression,
        format: Format,
        lossless: bool,
    ) -> io::Result<Compressed> {
        let (tx, rx) = sync_channel::<Chunk>(QUEUE);
        let (give_back, spare) = sync_channel::<Vec<u8>>(4);
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("zcap-compress".into())
            .spawn(move || write_chunks(file, how, rx, give_back, &s, format))?;
        Ok(Compressed {
            tx: Some(tx),
            spare,
            chunk: Vec::new(),
            header: true,
            format,
            lossless,
            immediate: false,
            shared,
            thread: Some(thread),
        })
    }

    /// The writer's failure, if it failed.
    fn failed(&self) -> io::Result<()> {
        match &*self
            .shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
        {
            Some((kind, msg)) => Err(io::Error::new(*kind, msg.clone())),
            None => Ok(()),
        }
    }

    /// Queues the chunk gathered so far; with `wait`, waits for room instead of dropping it.
    fn queue(&mut self, wait: bool) -> io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let next = self.spare.try_recv().unwrap_or_default();
        let chunk = Chunk {
            bytes: std::mem::replace(&mut self.chunk, next),
            header: std::mem::take(&mut self.header),
        };
        let tx = self.tx.as_ref().expect("queued before the end");
        match tx.try_send(chunk) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(chunk)) => {
                let (records, only_packets) =
                    count_records(&chunk.bytes, chunk.header, self.format);
                if only_packets && !wait && !self.lossless {
                    self.shared.dropped.fetch_add(records, Ordering::Relaxed);
                    metrics::add(&metrics::EVENTS.compressor_dropped, records);
                    Ok(())
                } else {
                    // The header or an interface block: the file needs it, wait.
                    tx.send(chunk).map_err(|_| self.gone())
                }
            }
            Err(TrySendError::Disconnected(_)) => Err(self.gone()),
        }
    }

    /// The writer thread is gone: its failure.
    fn gone(&self) -> io::Error {
        self.failed()
            .err()
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "the compressor ended"))
    }

    /// Ends the file: queues what is left (waiting for room), lets the writer finish the
    /// compressed stream, and says what the file holds. Idempotent.
    pub(crate) fn finish(&mut self) -> Closed {
        let mut error = None;
        if self.tx.is_some() {
            if let Err(e) = self.queue(true) {
                error = Some(e);
            }
        }
        self.tx = None;
        let bytes = match self.thread.take().map(|t| t.join()) {
            Some(Ok(Ok(bytes))) => bytes,
            Some(Ok(Err(e))) => {
                error.get_or_insert(e);
                0
            }
            Some(Err(_)) => {
                error.get_or_insert(io::Error::other("the compressor thread panicked"));
                0
            }
            None => 0,
        };
        Closed {
            records: self.shared.written.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            bytes,
            error,
        }
    }
}

impl Drop for Compressed {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Write for Compressed {
    /// Takes all of `buf` (whole records, as `SaveFile` hands them over).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.failed()?;
        self.chunk.extend_from_slice(buf);
        if self.chunk.len() >= CHUNK || self.immediate {
            self.queue(false)?;
        }
        Ok(buf.len())
    }

    /// Takes all of `bufs`: `SaveFile` hands a run of records over in one call.
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.failed()?;
        let mut n = 0;
        for b in bufs {
            self.chunk.extend_from_slice(b);
            n += b.len();
        }
        if self.chunk.len() >= CHUNK || self.immediate {
            self.queue(false)?;
        }
        Ok(n)
    }

    /// Queues what was gathered now, short as it may be (does not wait for the writer).
    fn flush(&mut self) -> io::Result<()> {
        self.failed()?;
        self.queue(false)
    }
}

/// Packets in `bytes` (whole records of `format`, after the file header if `header`), and
/// whether packets are all it holds.
fn count_records(bytes: &[u8], header: bool, format: Format) -> (u64, bool) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let (mut n, mut only_packets) = (0, !header);
    match format {
        Format::Pcap => {
            let mut at = if header { 24 } else { 0 };
            while at + 16 <= bytes.len() {
                at += 16 + word(at + 8);
                n += 1;
            }
        }
        Format::PcapNg => {
            let mut at = 0;
            while at + 8 <= bytes.len() {
                // Enhanced and simple packet blocks are packets; anything else is not.
                match word(at) {
                    6 | 3 => n += 1,
                    _ => only_packets = false,
                }
                at += word(at + 4).max(12);
            }
        }
        other => unreachable!("zcap writes pcap and pcapng only, not {other:?}"),
    }
    (n, only_packets)
}

/// The file under the compressor, counting what reached it.
struct Counted {
    file: File,
    bytes: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes += n as u64;
        metrics::add(&metrics::EVENTS.written_bytes, n as u64);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// One compressed stream a file (what Wireshark's readers expect: tshark 4.0 reads a single
/// Zstandard or LZ4 frame, and misreads concatenated ones), flushed after every chunk.
enum Encoder {
    Gzip(flate2::write::GzEncoder<Counted>),
    Zstd(zstd::stream::write::Encoder<'static, Counted>),
    Lz4(lz4_flex::frame::FrameEncoder<Counted>),
}

impl Encoder {
    fn new(out: Counted, how: Compression) -> io::Result<Encoder> {
        Ok(match how.codec {
            Codec::Gzip => {
                let level = flate2::Compression::new(how.level.unwrap_or(6) as u32);
                Encoder::Gzip(flate2::write::GzEncoder::new(out, level))
            }
            Codec::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(
                out,
                how.level.unwrap_or(3),
            )?),
            Codec::Lz4 => Encoder::Lz4(lz4_flex::frame::FrameEncoder::new(out)),
        })
    }

    /// Bytes in the file so far.
    fn written(&mut self) -> u64 {
        match self {
            Encoder::Gzip(e) => e.get_mut().bytes,
            Encoder::Zstd(e) => e.get_mut().bytes,
            Encoder::Lz4(e) => e.get_mut().bytes,
        }
    }

    /// `bytes` compressed and the compressor flushed (gzip: a sync flush; zstd: the block
    /// ended; LZ4: the block written): everything so far decodes from the file.
    fn write_flushed(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Gzip(e) => e.write_all(bytes).and_then(|_| e.flush()),
            Encoder::Zstd(e) => e.write_all(bytes).and_then(|_| e.flush()),
            Encoder::Lz4(e) => e.write_all(bytes).and_then(|_| e.flush()),
        }
    }

    /// Ends the stream (its trailer); the file's length.
    fn finish(self) -> io::Result<u64> {
        let out = match self {
            Encoder::Gzip(e) => e.finish()?,
            Encoder::Zstd(e) => e.finish()?,
            Encoder::Lz4(e) => e.finish().map_err(io::Error::other)?,
        };
        Ok(out.bytes)
    }
}

/// What the stream has taken whole (up to its last flush), and the bytes that end it there.
struct Whole {
    codec: Codec,
    /// File bytes up to the last flush.
    bytes: u64,
    /// gzip's trailer covers the data: its CRC-32 and length.
    crc: crc32fast::Hasher,
    len: u64,
}

impl Whole {
    /// The bytes that end the stream at the last flush: the stream as if it had been
    /// finished there.
    fn end(&self) -> Vec<u8> {
        match self.codec {
            // An empty final block with fixed codes (BFINAL 1, BTYPE 01, end of block), then
            // the member's CRC-32 and length modulo 2^32 (RFC 1951 3.2.6, RFC 1952 2.3.1).
            Codec::Gzip => {
                let mut e = vec![0x03, 0x00];
                e.extend_from_slice(&self.crc.clone().finalize().to_le_bytes());
                e.extend_from_slice(&(self.len as u32).to_le_bytes());
                e
            }
            // An empty last raw block (RFC 8878 3.1.1.2: Last_Block 1, Raw, size 0); the
            // frame has no content checksum.
            Codec::Zstd => vec![0x01, 0x00, 0x00],
            // The end mark (a zero block size); no content checksum.
            Codec::Lz4 => vec![0; 4],
        }
    }
}

/// The writer thread: each chunk compressed and flushed into the file; at the channel's
/// end, the stream's end. On a failure the file is cut back to the last flush and ended
/// there (it decodes to every record written whole, with no error), and the failure is left
/// for the capture thread. Returns the file's length.
fn write_chunks(
    file: File,
    how: Compression,
    rx: Receiver<Chunk>,
    give_back: SyncSender<Vec<u8>>,
    shared: &Shared,
    format: Format,
) -> io::Result<u64> {
    // Kept to cut the file back (the encoder owns the other).
    let cut = file.try_clone()?;
    let mut enc = Encoder::new(Counted { file, bytes: 0 }, how)?;
    let mut whole = Whole {
        codec: how.codec,
        bytes: 0,
        crc: crc32fast::Hasher::new(),
        len: 0,
    };
    let fail = |whole: &Whole, e: io::Error| {
        use std::os::unix::fs::FileExt;
        let _ = cut.set_len(whole.bytes);
        if whole.bytes > 0 {
            // The cut freed at least what the failed write took: the end fits.
            let _ = cut.write_all_at(&whole.end(), whole.bytes);
        }
        *shared.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some((e.kind(), e.to_string()));
        e
    };
    for mut chunk in rx {
        let (records, _) = count_records(&chunk.bytes, chunk.header, format);
        if let Err(e) = enc.write_flushed(&chunk.bytes) {
            // Dropped first: flate2's encoder writes its stream's end when dropped, which
            // must not land after the cut.
            drop(enc);
            return Err(fail(&whole, e));
        }
        whole.bytes = enc.written();
        whole.crc.update(&chunk.bytes);
        whole.len += chunk.bytes.len() as u64;
        shared.written.fetch_add(records, Ordering::Relaxed);
        chunk.bytes.clear();
        let _ = give_back.try_send(chunk.bytes);
    }
    enc.finish().map_err(|e| fail(&whole, e))
}

/// `input`, decompressed if its first bytes are those of a gzip member, a Zstandard frame or
/// an LZ4 frame (the name says nothing: `zcap -r -` reads them from a pipe too); a sequence
/// of members or frames reads as one stream.
pub(crate) fn decompressed(
    mut input: impl Read + Send + 'static,
) -> io::Result<Box<dyn Read + Send>> {
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < magic.len() {
        match input.read(&mut magic[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    // The bytes read go back in front of the rest.
    let whole = io::Cursor::new(magic[..n].to_vec()).chain(input);
    Ok(match magic {
        [0x1f, 0x8b, _, _] => Box::new(flate2::read::MultiGzDecoder::new(whole)),
        [0x28, 0xb5, 0x2f, 0xfd] => Box::new(zstd::stream::read::Decoder::new(whole)?),
        [0x04, 0x22, 0x4d, 0x18] => {
            Box::new(Lz4Frames(lz4_flex::frame::FrameDecoder::new(Counting {
                inner: whole,
                read: 0,
            })))
        }
        _ => Box::new(whole),
    })
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// LZ4 frames one after another: lz4_flex's decoder returns 0 at the end of each frame; the
/// stream ends only where a read takes no more input.
struct Lz4Frames<R: Read>(lz4_flex::frame::FrameDecoder<Counting<R>>);

impl<R: Read> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let before = self.0.get_ref().read;
            let n = self.0.read(buf)?;
            if n > 0 || buf.is_empty() || self.0.get_ref().read == before {
                return Ok(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pcap records of `len` bytes each (no file header).
    fn records(n: usize, len: usize) -> Vec<u8> {
        let mut b = Vec::new();
        for i in 0..n {
            b.extend_from_slice(&[0; 8]);
            b.extend_from_slice(&(len as u32).to_le_bytes());
            b.extend_from_slice(&(len as u32).to_le_bytes());
            b.extend(std::iter::repeat_n(i as u8, len));
        }
        b
    }

    #[test]
    fn names_and_levels() {
        let c = |n| Compression::from_name(n).map(|c| c.codec);
        assert_eq!(c("x.pcap.gz"), Some(Codec::Gzip));
        assert_eq!(c("x.pcapng.zst"), Some(Codec::Zstd));
        assert_eq!(c("x.lz4"), Some(Codec::Lz4));
        assert_eq!(c("x.pcap"), None);
        assert_eq!(Compression::parse("zstd:1").unwrap().describe(), "zstd:1");
        assert_eq!(Compression::parse("gzip").unwrap().level, None);
        for bad in ["zstd:0", "zstd:20", "gzip:10", "lz4:1", "brotli", "zstd:x"] {
            let e = Compression::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn records_are_counted_in_pcap_and_pcapng() {
        let mut b = vec![0u8; 24];
        b.extend(records(5, 60));
        assert_eq!(count_records(&b, true, Format::Pcap), (5, false));
        assert_eq!(
            count_records(&records(7, 1500), false, Format::Pcap),
            (7, true)
        );
        // pcapng: an interface block, then two enhanced packet blocks.
        let block = |kind: u32, len: u32| {
            let mut v = kind.to_le_bytes().to_vec();
            v.extend(len.to_le_bytes());
            v.resize(len as usize, 0);
            v
        };
        let mut ng = block(1, 20);
        ng.extend(block(6, 96));
        ng.extend(block(6, 32));
        assert_eq!(count_records(&ng, false, Format::PcapNg), (2, false));
        assert_eq!(count_records(&ng[20..], false, Format::PcapNg), (2, true));
    }

    /// The writer blocked (a pipe nobody reads): the capture thread never waits, the chunks
    /// past the queue are dropped and counted, and what was written plus what was dropped is
    /// every packet; the header is never dropped. Lossless, nothing is dropped.
    #[test]
    fn a_writer_that_falls_behind_costs_counted_drops_not_waits() {
        for lossless in [false, true] {
            let (r, w) = nix::unistd::pipe().unwrap();
            let mut c = Compressed::start(
                File::from(w),
                Compression::parse("lz4").unwrap(),
                Format::Pcap,
                lossless,
            )
            .unwrap();
            let read_all = move || {
                let mut out = Vec::new();
                File::from(r).read_to_end(&mut out).unwrap();
                out
            };
            c.write_all(&[0u8; 24]).unwrap();
            c.flush().unwrap();
            // Records of 1 000 bytes, 1 MB a chunk: far more than the queue and the pipe hold.
            let records_per_write = 1000;
            let bunch = records(records_per_write, 1032);
            let writes = 2 * QUEUE + 40;
            let reader = if lossless {
                // A lossless writer waits for room: someone must read.
                let reader = std::thread::spawn(read_all);
                for _ in 0..writes {
                    c.write_all(&bunch).unwrap();
                }
                reader
            } else {
                // Every write returns while nobody reads the pipe.
                for _ in 0..writes {
                    c.write_all(&bunch).unwrap();
                }
                std::thread::spawn(read_all)
            };
            let closed = c.finish();
            let bytes = reader.join().unwrap();
            assert!(closed.error.is_none());
            let all = (writes * records_per_write) as u64;
            assert_eq!(closed.records + closed.dropped, all, "lossless {lossless}");
            if lossless {
                assert_eq!(closed.dropped, 0);
            } else {
                // At most the queue and the chunk in the writer's hands were taken: of 296
                // chunks, some 167 dropped.
                assert!(closed.dropped >= 100_000, "{}", closed.dropped);
            }
            // The stream decodes to the header and the records written, whole.
            let mut plain = Vec::new();
            decompressed(io::Cursor::new(bytes))
                .unwrap()
                .read_to_end(&mut plain)
                .unwrap();
            assert_eq!(count_records(&plain, true, Format::Pcap).0, closed.records);
        }
    }
}
