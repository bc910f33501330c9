//! Capture files, both ways, in one place: reading pcap and pcapng with every length and
//! timestamp checked ([`CaptureFile`]), writing them whole record by whole record
//! ([`SaveFile`]), and streaming a file into a ring ([`FileRing`], bounded memory) so that
//! files go through the same walker, stage and flow table as live traffic.

mod read;
mod ring;
mod write;

pub use read::{CaptureFile, FilePacket, OfflineError};
pub use ring::{FileRing, FileRingBuilder, FileRingError};
pub use write::{Committed, Format, PacketRecord, SaveError, SaveFile, Taken, FLUSH_AT};
