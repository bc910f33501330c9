//! Capture files, both ways, in one place: reading pcap and pcapng with every length and
//! timestamp checked ([`CaptureFile`]), writing them whole record by whole record
//! ([`SaveFile`]), and laying a file out as a synthetic ring ([`synthetic_ring`]) so that
//! files go through the same walker, stage and flow table as live traffic.

mod read;
mod write;

pub use read::{CaptureFile, FilePacket, OfflineError};
pub use write::{Committed, Format, SaveError, SaveFile, Taken, FLUSH_AT};

use std::path::Path;

use zcrx_ring::{SyntheticRing, SyntheticRingBuilder};

/// Why a file could not become a synthetic ring.
#[derive(Debug, thiserror::Error)]
pub enum FileRingError {
    /// The file could not be read (the packets before the problem are not kept).
    #[error(transparent)]
    Read(#[from] OfflineError),
    /// The ring refused the geometry or a frame.
    #[error(transparent)]
    Ring(#[from] zcrx_ring::RingError),
}

/// Lays the frames of the pcap or pcapng file at `path` out as a synthetic ring
/// (timestamps and original lengths kept); returns it with the file's link type (of its
/// first interface), `None` for a file without packets.
pub fn synthetic_ring(
    builder: SyntheticRingBuilder,
    path: impl AsRef<Path>,
) -> Result<(SyntheticRing, Option<u32>), FileRingError> {
    let mut linktype = None;
    let frames = CaptureFile::open(path)?
        .map(|p| {
            p.map(|p| {
                linktype.get_or_insert(p.linktype);
                p.into_frame()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((builder.build(frames)?, linktype))
}
