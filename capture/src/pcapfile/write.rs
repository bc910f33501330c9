//! Writing captures: pcap (nanosecond timestamps) and pcapng, buffered, with VLAN tags put
//! back and original lengths kept.
//!
//! Promise: what reaches the underlying writer is always whole records. Records are gathered
//! in a buffer and handed over at record boundaries; [`SaveFile::committed`] says how many
//! bytes and records were accepted, so after a write error (a full disk) the caller can cut the
//! file back to exactly that length and it stays a valid capture holding exactly that many
//! packets.

use std::io::{self, IoSlice, Write};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// libpcap format with nanosecond timestamps (magic 0xa1b23c4d).
    Pcap,
    /// pcapng: section header, one interface (if_tsresol = 9: nanoseconds), enhanced packets.
    PcapNg,
}

/// What was accepted by the underlying writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Committed {
    /// Bytes, headers included.
    pub bytes: u64,
    /// Packet records.
    pub records: u64,
}

impl Committed {
    /// `bytes` (headers included) holding `records` packet records.
    pub fn new(bytes: u64, records: u64) -> Self {
        Committed { bytes, records }
    }
}

/// A write failed; everything up to `committed` was accepted whole.
#[derive(Debug, thiserror::Error)]
#[error("write failed after {} packets ({} bytes): {source}", committed.records, committed.bytes)]
#[non_exhaustive]
pub struct SaveError {
    /// The I/O error (ENOSPC for a full disk).
    pub source: io::Error,
    /// What was written whole before it.
    pub committed: Committed,
}

impl SaveError {
    /// `source` ended a file after `committed` (for writers that wrap a [`SaveFile`]).
    pub fn new(source: io::Error, committed: Committed) -> Self {
        SaveError { source, committed }
    }
}

/// One packet for [`SaveFile::write_many`]: what [`SaveFile::write`] takes, named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PacketRecord<'a> {
    /// Timestamp, ns since the epoch.
    pub ts_ns: u64,
    /// Length on the wire (as received, without a stripped tag).
    pub orig_len: u32,
    /// The bytes captured.
    pub data: &'a [u8],
    /// A (TCI, TPID) the kernel stripped, put back after the MAC addresses.
    pub vlan: Option<(u16, u16)>,
}

impl<'a> PacketRecord<'a> {
    /// A packet of `orig_len` bytes on the wire captured as `data` at `ts_ns`, untagged.
    #[inline(always)]
    pub fn new(ts_ns: u64, orig_len: u32, data: &'a [u8]) -> Self {
        PacketRecord {
            ts_ns,
            orig_len,
            data,
            vlan: None,
        }
    }
    /// The same packet with the VLAN tag (TCI, TPID) the kernel stripped, if any.
    #[inline(always)]
    pub fn with_vlan(mut self, vlan: Option<(u16, u16)>) -> Self {
        self.vlan = vlan;
        self
    }
}

/// Buffered pcap / pcapng writer.
pub struct SaveFile<W: Write> {
    out: W,
    format: Format,
    buf: Vec<u8>,
    /// Records in `buf` (after the file header, if that is still pending).
    pending: u64,
    /// Bytes of `buf` that are the file header, not yet written.
    header: usize,
    committed: Committed,
    flush_at: usize,
    /// pcapng interface description blocks written so far (the first is made by `new`).
    interfaces: u32,
}

/// A nanosecond pcap record header: seconds, nanoseconds, captured and original length.
#[inline(always)]
fn pcap_record_header(ts_ns: u64, caplen: u32, orig: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
    h[8..12].copy_from_slice(&caplen.to_le_bytes());
    h[12..16].copy_from_slice(&orig.to_le_bytes());
    h
}

/// What [`SaveFile::write_many`] took: records, their lengths on the wire (as passed) and
/// how many were cut short by the snapshot length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Taken {
    /// Records written.
    pub records: u64,
    /// Their original lengths, summed.
    pub wire_bytes: u64,
    /// Records whose original length exceeds the bytes captured.
    pub truncated: u64,
}

impl Taken {
    #[inline(always)]
    fn add(&mut self, orig_len: u32, captured: usize) {
        self.records += 1;
        self.wire_bytes += u64::from(orig_len);
        self.truncated += u64::from(orig_len as usize > captured);
    }
}

/// Default of [`SaveFile::flush_every`]: 256 KiB.
pub const FLUSH_AT: usize = 256 << 10;

/// [`SaveFile::write_many`] hands frames of this many bytes or more to the writer in place;
/// shorter ones are copied into the buffer beside their record headers, where the copy costs
/// less than another `iovec` for the kernel to walk.
pub const GATHER_MIN: usize = 256;

/// Frames [`SaveFile::write_many`] refers to in place per `writev` (with the buffer's pieces
/// between them: 2 x 64 + 1 `iovec`s, well under `IOV_MAX`).
const GATHER_SLICES: usize = 64;

impl<W: Write> SaveFile<W> {
    /// Starts a capture file with link type `linktype` (LINKTYPE_*) and `snaplen`.
    pub fn new(out: W, format: Format, linktype: u32, snaplen: u32) -> Self {
        let mut buf = Vec::with_capacity(FLUSH_AT + 70_000);
        match format {
            Format::Pcap => {
                buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond magic
                buf.extend_from_slice(&2u16.to_le_bytes());
                buf.extend_from_slice(&4u16.to_le_bytes());
                buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
                buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
                buf.extend_from_slice(&snaplen.to_le_bytes());
                buf.extend_from_slice(&linktype.to_le_bytes());
            }
            Format::PcapNg => {
                // Section Header Block (pcapng spec §4.1), no options.
                buf.extend_from_slice(&0x0A0D_0D0Au32.to_le_bytes());
                buf.extend_from_slice(&28u32.to_le_bytes());
                buf.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
                buf.extend_from_slice(&1u16.to_le_bytes());
                buf.extend_from_slice(&0u16.to_le_bytes());
                buf.extend_from_slice(&(-1i64).to_le_bytes()); // section length unknown
                buf.extend_from_slice(&28u32.to_le_bytes());
                // Interface Description Block (§4.2) with if_tsresol = 9 (ns) and end of options.
                let len = 20u32 + 8 + 4;
                buf.extend_from_slice(&1u32.to_le_bytes());
                buf.extend_from_slice(&len.to_le_bytes());
                buf.extend_from_slice(&(linktype as u16).to_le_bytes());
                buf.extend_from_slice(&0u16.to_le_bytes());
                buf.extend_from_slice(&snaplen.to_le_bytes());
                buf.extend_from_slice(&9u16.to_le_bytes()); // if_tsresol
                buf.extend_from_slice(&1u16.to_le_bytes());
                buf.extend_from_slice(&[9, 0, 0, 0]); // 10^-9, padded to 32 bits
                buf.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
                buf.extend_from_slice(&len.to_le_bytes());
            }
        }
        let header = buf.len();
        SaveFile {
            out,
            format,
            buf,
            pending: 0,
            header,
            committed: Committed::default(),
            flush_at: FLUSH_AT,
            interfaces: 1,
        }
    }

    /// Hands data to the underlying writer every `bytes` (records stay whole); default 256 KiB.
    pub fn flush_every(mut self, bytes: usize) -> Self {
        self.set_flush_every(bytes);
        self
    }

    /// [`SaveFile::flush_every`] on a file already being written (from the next record on).
    pub fn set_flush_every(&mut self, bytes: usize) {
        self.flush_at = bytes.max(1);
    }

    /// Adds one packet. `data` is what was captured; `orig_len` the length on the wire (as
    /// received, without a stripped tag); `vlan` a (TCI, TPID) the kernel stripped, which is
    /// put back after the MAC addresses (and counted in both lengths).
    #[inline(always)]
    pub fn write(
        &mut self,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
        vlan: Option<(u16, u16)>,
    ) -> Result<(), SaveError> {
        if vlan.is_some() || self.format != Format::Pcap {
            return self.write_general(ts_ns, orig_len, data, vlan);
        }
        // The common record, kept small enough to inline into a sniffer's loop: a pcap
        // record header and the frame as captured.
        let caplen = data.len() as u32;
        self.buf
            .extend_from_slice(&pcap_record_header(ts_ns, caplen, orig_len.max(caplen)));
        self.buf.extend_from_slice(data);
        self.pending += 1;
        if self.buf.len() >= self.flush_at {
            return self.hand_over();
        }
        Ok(())
    }

    /// Adds the packets of `records` (what [`SaveFile::write`] takes, as
    /// [`PacketRecord`]s) and adds what it took to `taken`, whether or
    /// not it fails (the record a write failed on counts as taken). Frames of
    /// `GATHER_MIN` (256) bytes or more are not copied into the buffer: they are handed to the
    /// writer in place with one `writev` (`Write::write_vectored`) beside the buffered record
    /// headers and small frames, so a sniffer writing from a ring copies each large frame once
    /// (the kernel's copy into the file) instead of twice. Every frame it refers to is handed
    /// over before this returns, so `records` need only live for the call. The file's bytes,
    /// [`SaveFile::committed`] and the records kept after a failed write are exactly those of
    /// the same records passed one by one to [`SaveFile::write`] (tested). pcapng records are
    /// copied as [`SaveFile::write`] copies them. Stops at the first error.
    #[inline]
    pub fn write_many<'a>(
        &mut self,
        mut records: impl Iterator<Item = PacketRecord<'a>>,
        taken: &mut Taken,
    ) -> Result<(), SaveError> {
        if self.format != Format::Pcap {
            return records.try_for_each(|r| {
                let PacketRecord {
                    ts_ns,
                    orig_len,
                    data,
                    vlan,
                } = r;
                taken.add(orig_len, data.len());
                self.write(ts_ns, orig_len, data, vlan)
            });
        }
        // Frames referred to in place: (where in `buf` they belong, bytes).
        let mut ext: [(usize, &[u8]); GATHER_SLICES] = [(0, &[]); GATHER_SLICES];
        let (mut n, mut ext_bytes) = (0, 0);
        // Internal iteration with the counts carried by value: the caller's iterator (a ring
        // block's walk) is inlined into this loop and the counts stay in registers (with
        // `for`, the iterator's `next` stays a call a packet).
        let r = records.try_fold(*taken, |mut t, r| {
            let PacketRecord {
                ts_ns,
                orig_len,
                data,
                vlan,
            } = r;
            t.add(orig_len, data.len());
            let caplen = data.len() as u32;
            if vlan.is_some() {
                self.append(ts_ns, orig_len, data, vlan);
            } else {
                let header = pcap_record_header(ts_ns, caplen, orig_len.max(caplen));
                self.buf.extend_from_slice(&header);
                if data.len() < GATHER_MIN {
                    self.buf.extend_from_slice(data);
                } else {
                    ext[n] = (self.buf.len(), data);
                    n += 1;
                    ext_bytes += data.len();
                }
            }
            self.pending += 1;
            if n == GATHER_SLICES || self.buf.len() + ext_bytes >= self.flush_at {
                if let Err(e) = self.hand_over_gathered(&ext[..n]) {
                    return Err((t, e));
                }
                (n, ext_bytes) = (0, 0);
            }
            Ok(t)
        });
        match r {
            Ok(t) => *taken = t,
            Err((t, e)) => {
                *taken = t;
                return Err(e);
            }
        }
        if n > 0 {
            self.hand_over_gathered(&ext[..n])?;
        }
        Ok(())
    }

    /// [`SaveFile::write`] of a tagged frame or into pcapng.
    fn write_general(
        &mut self,
        ts_ns: u64,
        orig_len: u32,
        data: &[u8],
        vlan: Option<(u16, u16)>,
    ) -> Result<(), SaveError> {
        self.append(ts_ns, orig_len, data, vlan);
        self.pending += 1;
        if self.buf.len() >= self.flush_at {
            self.hand_over()?;
        }
        Ok(())
    }

    /// One record of any kind into the buffer (not counted, not handed over).
    fn append(&mut self, ts_ns: u64, orig_len: u32, data: &[u8], vlan: Option<(u16, u16)>) {
        let tag = vlan.filter(|_| data.len() >= 12);
        let extra = if tag.is_some() { 4 } else { 0 };
        let caplen = data.len() + extra;
        let orig = orig_len.max(data.len() as u32) + extra as u32;
        let b = &mut self.buf;
        match self.format {
            Format::Pcap => b.extend_from_slice(&pcap_record_header(ts_ns, caplen as u32, orig)),
            Format::PcapNg => {
                let padded = caplen.next_multiple_of(4);
                let len = (32 + padded) as u32;
                let mut h = [0u8; 28];
                h[0..4].copy_from_slice(&6u32.to_le_bytes());
                h[4..8].copy_from_slice(&len.to_le_bytes());
                // interface 0: bytes 8..12 stay zero
                h[12..16].copy_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
                h[16..20].copy_from_slice(&(ts_ns as u32).to_le_bytes());
                h[20..24].copy_from_slice(&(caplen as u32).to_le_bytes());
                h[24..28].copy_from_slice(&orig.to_le_bytes());
                b.extend_from_slice(&h);
            }
        }
        match tag {
            Some((tci, tpid)) => {
                b.extend_from_slice(&data[..12]);
                b.extend_from_slice(&tpid.to_be_bytes());
                b.extend_from_slice(&tci.to_be_bytes());
                b.extend_from_slice(&data[12..]);
            }
            None => b.extend_from_slice(data),
        }
        if self.format == Format::PcapNg {
            let pad = caplen.next_multiple_of(4) - caplen;
            b.extend_from_slice(&[0u8; 3][..pad]);
            let len = (32 + caplen.next_multiple_of(4)) as u32;
            b.extend_from_slice(&len.to_le_bytes());
        }
    }

    /// pcapng: describes one more interface (link type, snaplen, `if_name`) and returns its
    /// interface id for [`SaveFile::write_cooked`]. Everything before it is handed over first,
    /// so the block is accepted whole or not at all, like the file header. pcap: no-op, 0.
    pub fn add_interface(
        &mut self,
        name: &str,
        linktype: u32,
        snaplen: u32,
    ) -> Result<u32, SaveError> {
        if self.format == Format::Pcap {
            return Ok(0);
        }
        self.hand_over()?;
        let name = name.as_bytes();
        let name_padded = name.len().next_multiple_of(4);
        // Header 16 + if_name (4 + padded) + if_tsresol (4 + 4) + end (4) + trailer 4.
        let len = (16 + 4 + name_padded + 8 + 4 + 4) as u32;
        let b = &mut self.buf;
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&(linktype as u16).to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&snaplen.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes()); // if_name
        b.extend_from_slice(&(name.len() as u16).to_le_bytes());
        b.extend_from_slice(name);
        b.extend_from_slice(&[0u8; 3][..name_padded - name.len()]);
        b.extend_from_slice(&9u16.to_le_bytes()); // if_tsresol: 10^-9
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&[9, 0, 0, 0]);
        b.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        b.extend_from_slice(&len.to_le_bytes());
        // Counted with the header bytes: whole or nothing.
        self.header = b.len();
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// Adds one packet captured cooked (`-i any`): `prefix` (an SLL2 header) then `data`
    /// from the network layer on, `orig_len` that part's length on the wire. pcapng: on
    /// interface `interface` with the enhanced packet block's `epb_flags` (direction in bits
    /// 0-1: 1 inbound, 2 outbound).
    pub fn write_cooked(
        &mut self,
        ts_ns: u64,
        orig_len: u32,
        prefix: &[u8],
        data: &[u8],
        interface: u32,
        epb_flags: u32,
    ) -> Result<(), SaveError> {
        let caplen = prefix.len() + data.len();
        let orig = orig_len.max(data.len() as u32) + prefix.len() as u32;
        let b = &mut self.buf;
        match self.format {
            Format::Pcap => {
                b.extend_from_slice(&pcap_record_header(ts_ns, caplen as u32, orig));
                b.extend_from_slice(prefix);
                b.extend_from_slice(data);
            }
            Format::PcapNg => {
                let padded = caplen.next_multiple_of(4);
                // Header 28 + data + epb_flags option (8) + end of options (4) + trailer 4.
                let len = (28 + padded + 8 + 4 + 4) as u32;
                b.extend_from_slice(&6u32.to_le_bytes());
                b.extend_from_slice(&len.to_le_bytes());
                b.extend_from_slice(&interface.to_le_bytes());
                b.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
                b.extend_from_slice(&(ts_ns as u32).to_le_bytes());
                b.extend_from_slice(&(caplen as u32).to_le_bytes());
                b.extend_from_slice(&orig.to_le_bytes());
                b.extend_from_slice(prefix);
                b.extend_from_slice(data);
                b.extend_from_slice(&[0u8; 3][..padded - caplen]);
                b.extend_from_slice(&2u16.to_le_bytes()); // epb_flags
                b.extend_from_slice(&4u16.to_le_bytes());
                b.extend_from_slice(&epb_flags.to_le_bytes());
                b.extend_from_slice(&[0, 0, 0, 0]);
                b.extend_from_slice(&len.to_le_bytes());
            }
        }
        self.pending += 1;
        if self.buf.len() >= self.flush_at {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Length of the record starting at `buf[off..]` (records are self-describing).
    fn record_len(&self, off: usize) -> usize {
        let u32_at =
            |o: usize| u32::from_le_bytes(self.buf[o..o + 4].try_into().expect("4 bytes")) as usize;
        match self.format {
            Format::Pcap => 16 + u32_at(off + 8),
            Format::PcapNg => u32_at(off + 4),
        }
    }

    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) -> Result<(), SaveError> {
        let mut written = 0;
        let mut failure = None;
        while written < self.buf.len() {
            match self.out.write(&self.buf[written..]) {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        // Count what reached the writer whole: the header, then records up to the last one
        // that ended within `written` (a short write before ENOSPC leaves a partial record,
        // which the caller cuts off at `committed.bytes`).
        let (mut whole_bytes, mut whole) = (0usize, 0u64);
        if written >= self.header {
            whole_bytes = self.header;
            if failure.is_none() {
                (whole_bytes, whole) = (written, self.pending);
            } else {
                while whole < self.pending {
                    let end = whole_bytes + self.record_len(whole_bytes);
                    if end > written {
                        break;
                    }
                    whole_bytes = end;
                    whole += 1;
                }
            }
        }
        self.committed.bytes += whole_bytes as u64;
        self.committed.records += whole;
        self.buf.drain(..whole_bytes);
        self.pending -= whole;
        self.header = self.header.saturating_sub(whole_bytes);
        match failure {
            None => Ok(()),
            Some(source) => Err(SaveError {
                source,
                committed: self.committed,
            }),
        }
    }

    /// [`SaveFile::hand_over`] of the buffer with `ext` (frames that belong at the given
    /// buffer offsets, ascending) in their places, in one `write_vectored` where the writer
    /// takes it whole. After a failure the records not written whole stay buffered (their
    /// frames copied in), exactly as `hand_over` leaves them.
    #[cold]
    #[inline(never)]
    fn hand_over_gathered(&mut self, ext: &[(usize, &[u8])]) -> Result<(), SaveError> {
        let mut slices = [IoSlice::new(&[]); 2 * GATHER_SLICES + 1];
        let mut at = 0;
        for (i, &(off, data)) in ext.iter().enumerate() {
            slices[2 * i] = IoSlice::new(&self.buf[at..off]);
            slices[2 * i + 1] = IoSlice::new(data);
            at = off;
        }
        slices[2 * ext.len()] = IoSlice::new(&self.buf[at..]);
        let total: usize = slices.iter().map(|s| s.len()).sum();
        let mut rest = &mut slices[..2 * ext.len() + 1];
        let (mut written, mut failure) = (0, None);
        while written < total {
            match self.out.write_vectored(rest) {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(k) => {
                    written += k;
                    IoSlice::advance_slices(&mut rest, k);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let Some(source) = failure else {
            self.committed.bytes += total as u64;
            self.committed.records += self.pending;
            (self.pending, self.header) = (0, 0);
            self.buf.clear();
            return Ok(());
        };
        // Whole records written (as `hand_over` counts them), walking the records' headers,
        // all in the buffer: a frame is in `ext` when one belongs right after its header.
        let (mut whole_bytes, mut whole) = (0usize, 0u64);
        if written >= self.header {
            let (mut b, mut k) = (self.header, 0);
            whole_bytes = self.header;
            while whole < self.pending {
                let caplen = self.record_len(b) - 16;
                let end = whole_bytes + 16 + caplen;
                if end > written {
                    break;
                }
                let in_place = ext.get(k).is_some_and(|&(off, _)| off == b + 16);
                k += usize::from(in_place);
                b += 16 + if in_place { 0 } else { caplen };
                (whole_bytes, whole) = (end, whole + 1);
            }
        }
        // Keep what was not written whole, frames copied in (the stream from `whole_bytes`;
        // the slices themselves were advanced past what was written).
        let mut kept = Vec::with_capacity(total - whole_bytes + FLUSH_AT);
        let (mut at, mut pos) = (0, 0);
        let mut keep = |s: &[u8]| {
            let skip = whole_bytes.saturating_sub(pos).min(s.len());
            kept.extend_from_slice(&s[skip..]);
            pos += s.len();
        };
        for &(off, data) in ext {
            keep(&self.buf[at..off]);
            keep(data);
            at = off;
        }
        keep(&self.buf[at..]);
        self.committed.bytes += whole_bytes as u64;
        self.committed.records += whole;
        self.pending -= whole;
        self.header = self.header.saturating_sub(whole_bytes);
        self.buf = kept;
        Err(SaveError {
            source,
            committed: self.committed,
        })
    }

    /// Hands everything over and flushes the writer.
    pub fn flush(&mut self) -> Result<(), SaveError> {
        self.hand_over()?;
        self.out.flush().map_err(|source| SaveError {
            source,
            committed: self.committed,
        })
    }

    /// Packets added so far (accepted or still buffered).
    pub fn records(&self) -> u64 {
        self.committed.records + self.pending
    }

    /// The file's length once everything added so far is handed over (what `ftell` says of
    /// a stdio stream): the bytes accepted plus those still buffered.
    pub fn position(&self) -> u64 {
        self.committed.bytes + self.buf.len() as u64
    }

    /// What the writer accepted whole.
    pub fn committed(&self) -> Committed {
        self.committed
    }

    /// The underlying writer, to look at.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The underlying writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

#[cfg(test)]
mod test;
