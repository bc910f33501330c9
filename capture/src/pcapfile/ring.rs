//! A capture file as a streaming ring ([`FileRing`]): its packets feed a synthetic ring of a
//! few blocks, refilled as the stage hands them back, so a file of any size (or standard
//! input) goes through the same walker, stage and flow table as live traffic in bounded
//! memory.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use zcrx_ring::{Block, BlockMap, Frame, RingError, SyntheticRing};

use super::read::{CaptureFile, FilePacket, OfflineError};
use crate::pipeline::StopToken;
use crate::source::{sealed, BlockSource};

/// Why a file could not become a ring.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileRingError {
    /// The file could not be read (its header, or its first packet).
    #[error(transparent)]
    Read(#[from] OfflineError),
    /// The ring refused the geometry.
    #[error(transparent)]
    Ring(#[from] RingError),
}

/// What the feed found, for the ring's owner.
#[derive(Debug, Default)]
struct Report {
    /// Packets read from the file (before [`FileRingBuilder::keep`]).
    read: AtomicU64,
    /// Why the file ended early.
    failure: Mutex<Option<OfflineError>>,
}

/// A pcap or pcapng file read as a ring: a [`BlockSource`] for a
/// [`Pipeline`](crate::Pipeline). Its memory is its blocks (four by default, each holding at
/// least one frame of the snapshot length) and the reader's buffer, whatever the size of the
/// file. A file that breaks off (truncated, malformed, a second link type) ends the ring
/// where it breaks, so a pipeline's run over it ends `Ok` with every packet before the
/// break: call [`FileRing::take_error`] after the run to learn whether, and why, it broke
/// off. A pipeline whose configuration names no link type takes the file's.
///
/// ```
/// use zcrx_capture::pcapfile::{FileRing, Format, SaveFile};
/// use zcrx_capture::{Delivered, Hooks, Pipeline, PipelineConfig};
/// let path = std::env::temp_dir().join(format!("filering-doc-{}.pcap", std::process::id()));
/// let mut save = SaveFile::new(std::fs::File::create(&path)?, Format::Pcap, 1, 65535);
/// for i in 0..1000u64 {
///     save.write(i * 1000, 60, &[0u8; 60], None)?;
/// }
/// save.flush()?;
/// let ring = FileRing::open(&path)?;
/// assert_eq!(ring.linktype(), Some(1));
/// let run = Pipeline::new(&ring, PipelineConfig::default())
///     .run(|_| |_: &Delivered<'_>| {}, Hooks::new())?;
/// assert_eq!(run.stats.packets, 1000);
/// if let Some(e) = ring.take_error() {
///     return Err(e.into()); // the file broke off after `run.stats.packets` packets
/// }
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FileRing {
    ring: SyntheticRing,
    linktype: Option<u32>,
    report: Arc<Report>,
}

/// Which packets enter the ring ([`FileRingBuilder::keep`]).
type Keep = Box<dyn FnMut(&FilePacket) -> bool + Send>;

/// How a [`FileRing`] is laid out and fed.
#[must_use = "a builder does nothing until `open` or `build` is called"]
pub struct FileRingBuilder {
    snaplen: u32,
    block_count: usize,
    keep: Option<Keep>,
    stop: Option<StopToken>,
}

impl std::fmt::Debug for FileRingBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRingBuilder")
            .field("snaplen", &self.snaplen)
            .field("block_count", &self.block_count)
            .field("keep", &self.keep.is_some())
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

impl Default for FileRingBuilder {
    fn default() -> Self {
        FileRingBuilder {
            snaplen: 262_144,
            block_count: 4,
            keep: None,
            stop: None,
        }
    }
}

impl FileRingBuilder {
    /// Bytes kept of each packet; longer ones are cut, their length on the wire kept
    /// (default 262 144, libpcap's largest). Blocks are sized to hold a whole frame of it.
    pub fn snaplen(mut self, bytes: u32) -> Self {
        self.snaplen = bytes;
        self
    }
    /// Blocks of the ring (default 4): what is read ahead of the stage.
    pub fn block_count(mut self, blocks: usize) -> Self {
        self.block_count = blocks;
        self
    }
    /// Only packets for which `keep` is true enter the ring (a filter run in user space,
    /// where the kernel runs it on a live ring).
    pub fn keep(mut self, keep: impl FnMut(&FilePacket) -> bool + Send + 'static) -> Self {
        self.keep = Some(Box::new(keep));
        self
    }
    /// The file ends at the next packet once `stop` is stopped; a read error after the stop
    /// (a read cut short by it) is no failure of the file.
    pub fn stop_on(mut self, stop: &StopToken) -> Self {
        self.stop = Some(stop.clone());
        self
    }

    /// Opens the pcap or pcapng file at `path` as a ring.
    pub fn open(self, path: impl AsRef<Path>) -> Result<FileRing, FileRingError> {
        self.build(CaptureFile::open(path)?)
    }

    /// The packets of `file` (its header read) as a ring. Reads its first packet here to
    /// learn its link type; an error there is this call's (unless the stop came first: the
    /// ring is then empty).
    pub fn build(self, mut file: CaptureFile) -> Result<FileRing, FileRingError> {
        let stopped = self.stop.as_ref().is_some_and(StopToken::is_stopped);
        let linktype = match file.peek() {
            None => None,
            Some(Ok(p)) => Some(p.linktype),
            Some(Err(_)) if stopped => None,
            Some(Err(_)) => {
                let Some(Err(e)) = file.next() else {
                    unreachable!("the peeked error")
                };
                return Err(e.into());
            }
        };
        let report = Arc::new(Report::default());
        let feed = Feed {
            file,
            linktype,
            keep: self.keep,
            stop: self.stop,
            report: report.clone(),
        };
        let ring = SyntheticRing::builder()
            .block_size(block_size(self.snaplen))
            .block_count(self.block_count)
            .snaplen(self.snaplen)
            .stream(feed)?;
        Ok(FileRing {
            ring,
            linktype,
            report,
        })
    }
}

/// A block size that holds a whole frame of `snaplen` bytes with its headers.
fn block_size(snaplen: u32) -> usize {
    (snaplen as usize + 4096)
        .next_power_of_two()
        .clamp(zcrx_ring::DEFAULT_BLOCK_SIZE, 1 << 30)
}

impl FileRing {
    /// A builder: snapshot length, blocks, a filter, a stop token.
    pub fn builder() -> FileRingBuilder {
        FileRingBuilder::default()
    }

    /// Opens the pcap or pcapng file at `path` as a ring, with the builder's defaults.
    pub fn open(path: impl AsRef<Path>) -> Result<FileRing, FileRingError> {
        FileRing::builder().open(path)
    }

    /// The file's link type (LINKTYPE_*, of its first packet); `None` for a file without
    /// packets.
    pub fn linktype(&self) -> Option<u32> {
        self.linktype
    }

    /// Packets read from the file so far, kept or not.
    pub fn packets_read(&self) -> u64 {
        self.report.read.load(Ordering::Relaxed)
    }

    /// Why the file ended before its end (truncated, malformed, a packet of a second link
    /// type), once the ring is read out; `None` if it was read to its end or stopped.
    pub fn take_error(&self) -> Option<OfflineError> {
        self.report
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The ring the file feeds ([`SyntheticRing::stream_error`]: a frame it refused).
    pub fn ring(&self) -> &SyntheticRing {
        &self.ring
    }
}

impl sealed::Sealed for FileRing {}

impl BlockSource for FileRing {
    fn next_block(&self, timeout: Duration) -> Result<Option<Block<'_>>, RingError> {
        BlockSource::next_block(&self.ring, timeout)
    }
    fn exhausted(&self) -> bool {
        self.ring.is_exhausted()
    }
    fn block_map(&self) -> &BlockMap {
        self.ring.map()
    }
    fn link_type(&self) -> Option<zcrx_flowcache::LinkType> {
        self.linktype
            .and_then(zcrx_flowcache::LinkType::from_linktype)
    }
}

/// The file's packets, kept by the filter, as frames for the ring.
struct Feed {
    file: CaptureFile,
    /// The first packet's link type: a packet of another ends the file.
    linktype: Option<u32>,
    keep: Option<Keep>,
    stop: Option<StopToken>,
    report: Arc<Report>,
}

impl Feed {
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(StopToken::is_stopped)
    }

    fn fail(&self, e: OfflineError) -> Option<Frame> {
        *self
            .report
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(e);
        None
    }
}

impl Iterator for Feed {
    type Item = Frame;

    fn next(&mut self) -> Option<Frame> {
        loop {
            if self.stopped() {
                return None;
            }
            let p = match self.file.next()? {
                Ok(p) => p,
                // The read was cut short by the stop: not a broken file.
                Err(_) if self.stopped() => return None,
                Err(e) => return self.fail(e),
            };
            let read = self.report.read.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(first) = self.linktype.filter(|&l| l != p.linktype) {
                return self.fail(OfflineError::Malformed {
                    path: self.file.name().to_owned(),
                    packets: read - 1,
                    detail: format!(
                        "interfaces of different link types ({first} and {}) are not supported",
                        p.linktype
                    ),
                });
            }
            if self.keep.as_mut().is_some_and(|keep| !keep(&p)) {
                continue;
            }
            return Some(p.into_frame());
        }
    }
}
