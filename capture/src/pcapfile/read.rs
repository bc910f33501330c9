//! Reading pcap and pcapng files (pcap-file does the parsing), with every length and timestamp
//! checked and a clear error for empty, truncated, garbage or hostile files.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{Endianness, PcapError, TsResolution};

/// One packet from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilePacket {
    /// Timestamp, ns since the epoch.
    pub ts_ns: u64,
    /// Length on the wire.
    pub orig_len: u32,
    /// Captured bytes.
    pub data: Vec<u8>,
    /// LINKTYPE_* of its interface.
    pub linktype: u32,
}

impl FilePacket {
    /// The packet as a frame for a synthetic ring (timestamp and original length kept).
    pub fn into_frame(self) -> zcrx_ring::Frame {
        zcrx_ring::Frame::new(self.data)
            .wire_len(self.orig_len)
            .at(self.ts_ns)
    }
}

/// Why a file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OfflineError {
    /// Could not open or read it.
    #[error("{path}: {source}")]
    Io {
        /// The file's path, as given.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file has no bytes at all.
    #[error("{path}: empty file, not a capture")]
    Empty {
        /// The file's path, as given.
        path: String,
    },
    /// Neither pcap nor pcapng magic.
    #[error("{path}: not a pcap or pcapng file (magic {magic:02x?})")]
    NotACapture {
        /// The file's path, as given.
        path: String,
        /// The first bytes.
        magic: Vec<u8>,
    },
    /// Cut short or inconsistent, after `packets` good packets.
    #[error("{path}: truncated or malformed after {packets} packets: {detail}")]
    Malformed {
        /// The file's path, as given.
        path: String,
        /// Packets read before the problem.
        packets: u64,
        /// What was wrong.
        detail: String,
    },
}

/// The bytes of a capture: a file, or any reader (fuzzing, standard input). pcap-file
/// buffers on its own (8 MB), so no `BufReader` in between.
type Source = Box<dyn Read + Send>;

enum Inner {
    Pcap {
        r: PcapStream,
        linktype: u32,
        nanos: bool,
    },
    PcapNg {
        r: PcapNgReader<Source>,
        ifaces: Vec<(u32, Resolution)>,
    },
}

/// A pcapng interface's timestamp unit.
#[derive(Debug, Clone, Copy)]
struct Resolution(u8);

impl Resolution {
    /// Whether the unit is one this reader converts (10^-0..=19 s, 2^-0..=63 s).
    fn supported(self) -> bool {
        if self.0 & 0x80 != 0 {
            self.0 & 0x7f <= 63
        } else {
            self.0 <= 19
        }
    }

    /// The unit as people write it.
    fn unit(self) -> String {
        if self.0 & 0x80 != 0 {
            format!("2^-{} s", self.0 & 0x7f)
        } else {
            format!("10^-{} s", self.0)
        }
    }

    /// Why `raw` has no time in nanoseconds: an unsupported unit, or a time stamp too large.
    fn refusal(self, raw: u64, packet: u64) -> String {
        if self.supported() {
            format!(
                "packet {packet}: timestamp {raw} in units of {} (if_tsresol {:#x}) overflows 64-bit nanoseconds since 1970 (past the year 2554)",
                self.unit(),
                self.0
            )
        } else {
            format!("packet {packet}: timestamp unit {:#x} unsupported", self.0)
        }
    }

    fn to_ns(self, raw: u64) -> Option<u64> {
        let r = self.0;
        if r & 0x80 != 0 {
            // 2^-n seconds.
            let n = u32::from(r & 0x7f);
            if n > 63 {
                return None;
            }
            Some(((u128::from(raw) * 1_000_000_000) >> n) as u64)
        } else if r <= 9 {
            raw.checked_mul(10u64.pow(9 - u32::from(r)))
        } else if r <= 19 {
            Some(raw / 10u64.pow(u32::from(r) - 9))
        } else {
            None
        }
    }
}

/// A pcap or pcapng file, packet by packet.
pub struct CaptureFile {
    path: String,
    inner: Inner,
    packets: u64,
    done: bool,
    /// The next item, read ahead by [`CaptureFile::peek`].
    peeked: Option<Option<Result<FilePacket, OfflineError>>>,
}

impl CaptureFile {
    /// Opens `path` and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<CaptureFile, OfflineError> {
        let p = path.as_ref();
        let name = p.display().to_string();
        let f = File::open(p).map_err(|source| OfflineError::Io {
            path: name.clone(),
            source,
        })?;
        Self::from_reader(name, f)
    }

    /// Reads a capture from `reader` (named `name` in errors) and reads its header.
    pub fn from_reader(
        name: impl Into<String>,
        mut reader: impl Read + Send + 'static,
    ) -> Result<CaptureFile, OfflineError> {
        let path = name.into();
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut reader, &mut magic).map_err(|source| OfflineError::Io {
            path: path.clone(),
            source,
        })?;
        if n == 0 {
            return Err(OfflineError::Empty { path });
        }
        // The magic goes back in front of the rest for the parser.
        let f: Source = Box::new(std::io::Cursor::new(magic[..n].to_vec()).chain(reader));
        let bad = |detail: String| OfflineError::Malformed {
            path: path.clone(),
            packets: 0,
            detail,
        };
        let inner = match magic {
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                let r = PcapNgReader::new(f).map_err(|e| bad(pcapng_error(e, "section header")))?;
                Inner::PcapNg {
                    r,
                    ifaces: Vec::new(),
                }
            }
            [0xd4, 0xc3, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0xc3, 0xd4]
            | [0x4d, 0x3c, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0x3c, 0x4d] => {
                let r = PcapStream::new(f).map_err(bad)?;
                let h = r.parser.header();
                Inner::Pcap {
                    linktype: h.datalink.into(),
                    nanos: h.ts_resolution == TsResolution::NanoSecond,
                    r,
                }
            }
            _ => {
                return Err(OfflineError::NotACapture {
                    path,
                    magic: magic[..n].to_vec(),
                })
            }
        };
        Ok(CaptureFile {
            path,
            inner,
            packets: 0,
            done: false,
            peeked: None,
        })
    }

    /// The file's name, as given (errors start with it).
    pub fn name(&self) -> &str {
        &self.path
    }

    /// The next packet (or the error that ends the file, or `None` at its end) without
    /// taking it: the iterator yields it next. What a reader needs to learn a pcapng file's
    /// link type, which comes with its first interface, before it reads on.
    pub fn peek(&mut self) -> Option<&Result<FilePacket, OfflineError>> {
        if self.peeked.is_none() {
            let next = self.read_next();
            self.peeked = Some(next);
        }
        self.peeked.as_ref().and_then(Option::as_ref)
    }

    /// The link type of a classic pcap file, or of the first pcapng interface seen so far.
    pub fn linktype(&self) -> Option<u32> {
        match &self.inner {
            Inner::Pcap { linktype, .. } => Some(*linktype),
            Inner::PcapNg { ifaces, .. } => ifaces.first().map(|i| i.0),
        }
    }

    fn malformed(&self, detail: impl Into<String>) -> OfflineError {
        OfflineError::Malformed {
            path: self.path.clone(),
            packets: self.packets,
            detail: detail.into(),
        }
    }

    fn next_packet(&mut self) -> Option<Result<FilePacket, OfflineError>> {
        loop {
            let packets = self.packets;
            let result = match &mut self.inner {
                Inner::Pcap { r, linktype, nanos } => next_pcap(r, *linktype, *nanos, packets)?,
                Inner::PcapNg { r, ifaces } => next_pcapng(r, ifaces, packets)?,
            };
            return match result {
                Ok(Some(p)) => {
                    self.packets += 1;
                    Some(Ok(p))
                }
                Ok(None) => continue,
                Err(detail) => Some(Err(self.malformed(detail))),
            };
        }
    }
}

/// What the records of a capture may hold at most: libpcap's largest snapshot length
/// (MAXIMUM_SNAPLEN), or the file's own if it is larger, up to [`RECORD_CEILING`]. A record
/// claiming more is refused before its bytes are read, so a hostile length cannot make the
/// reader allocate.
const MAXIMUM_SNAPLEN: u32 = 262_144;
/// The largest record any file may claim (64 MiB).
const RECORD_CEILING: u32 = 64 << 20;
/// Bytes a classic pcap reader asks its source for at a time.
const READ_CHUNK: usize = 256 << 10;
/// A classic pcap record header: seconds, sub-seconds, captured and original length.
const RECORD_HEADER: usize = 16;
/// A classic pcap file header.
const FILE_HEADER: usize = 24;

/// A classic pcap record's fields, as the file has them.
struct PcapRecord {
    ts_sec: u32,
    /// Micro- or nanoseconds, as the file's magic says.
    ts_frac: u32,
    orig_len: u32,
    data: Vec<u8>,
}

/// A classic pcap file read record by record (pcap-file's parser over a buffer of its own),
/// so that a record cut short is named with its number, its byte offset and the lengths
/// expected and present. Memory: one chunk plus the largest record.
struct PcapStream {
    src: Source,
    parser: PcapParser,
    /// Bytes read and not yet parsed: `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    /// Where `buf[start]` is in the file.
    offset: u64,
    eof: bool,
    /// The longest record accepted.
    max_record: u32,
}

impl PcapStream {
    /// Reads the file header; `Err` says how it is cut short or what is wrong with it.
    fn new(mut src: Source) -> Result<PcapStream, String> {
        let mut header = [0u8; FILE_HEADER];
        let n = read_up_to(&mut src, &mut header).map_err(|e| e.to_string())?;
        if n < FILE_HEADER {
            return Err(format!(
                "pcap file header cut short: {FILE_HEADER} bytes expected, {n} present"
            ));
        }
        let (_, parser) = PcapParser::new(&header).map_err(|e| e.to_string())?;
        let max_record = parser
            .header()
            .snaplen
            .clamp(MAXIMUM_SNAPLEN, RECORD_CEILING);
        Ok(PcapStream {
            src,
            parser,
            buf: Vec::new(),
            start: 0,
            offset: FILE_HEADER as u64,
            eof: false,
            max_record,
        })
    }

    /// The captured length a record header says (bytes 8..12 in the file's byte order).
    fn incl_len(&self, header: &[u8]) -> u32 {
        let b: [u8; 4] = header[8..12].try_into().expect("a record header");
        match self.parser.header().endianness {
            Endianness::Big => u32::from_be_bytes(b),
            Endianness::Little => u32::from_le_bytes(b),
        }
    }

    /// Reads more of the source after the unparsed bytes; false at the end of the input.
    fn fill(&mut self) -> std::io::Result<bool> {
        self.buf.drain(..self.start);
        self.start = 0;
        let have = self.buf.len();
        self.buf.resize(have + READ_CHUNK, 0);
        // `Interrupted` is passed on, not retried: a reader that stops on request (a signal
        // ending a read of standard input) says so with it.
        let n = self.src.read(&mut self.buf[have..]);
        self.buf.truncate(have + n.as_ref().map_or(0, |n| *n));
        self.eof = n? == 0;
        Ok(!self.eof)
    }

    /// The next record (`record`: its number, from 1): its fields and bytes, `None` at the
    /// end of the file, or what is wrong with it.
    fn next(&mut self, record: u64) -> Option<Result<PcapRecord, String>> {
        loop {
            let avail = &self.buf[self.start..];
            let at = self.offset;
            if avail.len() >= RECORD_HEADER {
                let incl = self.incl_len(avail);
                if incl > self.max_record {
                    return Some(Err(format!(
                        "record {record} at byte {at}: it claims {incl} captured bytes, more than the {} a record of this file may hold",
                        self.max_record
                    )));
                }
                let len = RECORD_HEADER + incl as usize;
                if avail.len() >= len {
                    return Some(match self.parser.next_raw_packet(&avail[..len]) {
                        Ok((_, p)) => {
                            let fields = PcapRecord {
                                ts_sec: p.ts_sec,
                                ts_frac: p.ts_frac,
                                orig_len: p.orig_len,
                                data: p.data.into_owned(),
                            };
                            self.start += len;
                            self.offset += len as u64;
                            Ok(fields)
                        }
                        Err(e) => Err(format!("record {record} at byte {at}: {e}")),
                    });
                }
            }
            if self.eof {
                return match avail.len() {
                    0 => None,
                    n if n < RECORD_HEADER => Some(Err(format!(
                        "record {record} at byte {at}: record header cut short: {RECORD_HEADER} bytes expected, {n} present"
                    ))),
                    n => Some(Err(format!(
                        "record {record} at byte {at}: packet data cut short: {} bytes expected, {} present",
                        self.incl_len(avail),
                        n - RECORD_HEADER
                    ))),
                };
            }
            if let Err(e) = self.fill() {
                return Some(Err(format!("record {record} at byte {at}: {e}")));
            }
        }
    }
}

/// The next record of a classic pcap file: a packet, or the reason it is malformed. `None`
/// at the end of the file.
fn next_pcap(
    r: &mut PcapStream,
    linktype: u32,
    nanos: bool,
    packets: u64,
) -> Option<Result<Option<FilePacket>, String>> {
    let PcapRecord {
        ts_sec,
        ts_frac,
        orig_len,
        data,
    } = match r.next(packets + 1)? {
        Err(e) => return Some(Err(e)),
        Ok(p) => p,
    };
    // Records are not checked against the file's snaplen (orig_len > snaplen is every
    // truncated capture; some writers exceed their own snaplen); their size is bounded by
    // `PcapStream::max_record`.
    let (frac_ok, frac_ns) = if nanos {
        (ts_frac < 1_000_000_000, u64::from(ts_frac))
    } else {
        (ts_frac < 1_000_000, u64::from(ts_frac) * 1000)
    };
    if !frac_ok {
        return Some(Err(format!(
            "packet {}: sub-second timestamp {} out of range",
            packets + 1,
            ts_frac
        )));
    }
    Some(Ok(Some(FilePacket {
        ts_ns: u64::from(ts_sec) * 1_000_000_000 + frac_ns,
        orig_len: orig_len.max(data.len() as u32),
        data,
        linktype,
    })))
}

/// pcap-file's error for a pcapng block, said as what it is: "Error reading bytes" at the
/// end of the input is a block cut short.
fn pcapng_error(e: PcapError, what: &str) -> String {
    match e {
        PcapError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("{what} cut short: the file ends inside it")
        }
        PcapError::IncompleteBuffer => format!("{what} cut short: the file ends inside it"),
        e => format!("{what}: {e}"),
    }
}

/// The next block of a pcapng file: a packet, `Ok(None)` for a block that is not one (after
/// noting interfaces), or the reason it is malformed. `None` at the end of the file.
fn next_pcapng(
    r: &mut PcapNgReader<Source>,
    ifaces: &mut Vec<(u32, Resolution)>,
    packets: u64,
) -> Option<Result<Option<FilePacket>, String>> {
    Some(match r.next_block()? {
        Err(e) => Err(pcapng_error(
            e,
            &format!("the block after packet {packets}"),
        )),
        Ok(Block::InterfaceDescription(i)) => {
            let res = i
                .options
                .iter()
                .find_map(|o| {
                    if let InterfaceDescriptionOption::IfTsResol(r) = o {
                        Some(*r)
                    } else {
                        None
                    }
                })
                .unwrap_or(6); // default: microseconds (pcapng spec)
            ifaces.push((i.linktype.into(), Resolution(res)));
            Ok(None)
        }
        Ok(Block::SectionHeader(_)) => {
            // A new section starts a new interface numbering.
            ifaces.clear();
            Ok(None)
        }
        Ok(Block::EnhancedPacket(p)) => match ifaces.get(p.interface_id as usize) {
            None => Err(format!(
                "packet {} names interface {} that was not described",
                packets + 1,
                p.interface_id
            )),
            Some(&(linktype, res)) => match res.to_ns(p.timestamp.as_nanos() as u64) {
                None => Err(res.refusal(p.timestamp.as_nanos() as u64, packets + 1)),
                Some(ts_ns) => Ok(Some(FilePacket {
                    ts_ns,
                    orig_len: p.original_len.max(p.data.len() as u32),
                    data: p.data.into_owned(),
                    linktype,
                })),
            },
        },
        Ok(Block::SimplePacket(p)) => match ifaces.first() {
            None => Err(format!(
                "packet {} before any interface description",
                packets + 1
            )),
            Some(&(linktype, _)) => Ok(Some(FilePacket {
                ts_ns: 0,
                orig_len: p.original_len.max(p.data.len() as u32),
                data: p.data.into_owned(),
                linktype,
            })),
        },
        Ok(_) => Ok(None),
    })
}

impl Iterator for CaptureFile {
    type Item = Result<FilePacket, OfflineError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.peeked.take() {
            Some(next) => next,
            None => self.read_next(),
        }
    }
}

impl CaptureFile {
    fn read_next(&mut self) -> Option<Result<FilePacket, OfflineError>> {
        if self.done {
            return None;
        }
        let r = self.next_packet();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

fn read_up_to(f: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pcapng of one Ethernet interface with `if_tsresol` = `tsresol` and one 60-byte packet
    /// whose raw time stamp is `raw` (little-endian, built by hand).
    fn pcapng(tsresol: u8, raw: u64) -> Vec<u8> {
        let mut b = Vec::new();
        let u32le = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        // Section header: type, length 28, byte-order magic, version 1.0, unknown length.
        u32le(&mut b, 0x0A0D_0D0A);
        u32le(&mut b, 28);
        u32le(&mut b, 0x1A2B_3C4D);
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
        u32le(&mut b, 28);
        // Interface description: Ethernet, if_tsresol (code 9, one byte, padded), end.
        u32le(&mut b, 1);
        u32le(&mut b, 32);
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        u32le(&mut b, 0);
        b.extend_from_slice(&9u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&[tsresol, 0, 0, 0]);
        u32le(&mut b, 0);
        u32le(&mut b, 32);
        // Enhanced packet: interface 0, the time stamp's high and low words, 60 bytes.
        u32le(&mut b, 6);
        u32le(&mut b, 92);
        u32le(&mut b, 0);
        u32le(&mut b, (raw >> 32) as u32);
        u32le(&mut b, raw as u32);
        u32le(&mut b, 60);
        u32le(&mut b, 60);
        b.extend_from_slice(&[0u8; 60]);
        u32le(&mut b, 92);
        b
    }

    fn first(bytes: Vec<u8>) -> Result<FilePacket, OfflineError> {
        let mut f = CaptureFile::from_reader("crafted.pcapng", std::io::Cursor::new(bytes))?;
        f.next().expect("a packet or an error")
    }

    /// A classic pcap (nanoseconds) of three records of 100, 200 and 300 bytes.
    fn three_records() -> Vec<u8> {
        let mut w =
            crate::pcapfile::SaveFile::new(Vec::new(), crate::pcapfile::Format::Pcap, 1, 65535);
        for (i, len) in [100usize, 200, 300].into_iter().enumerate() {
            w.write(i as u64 * 1000, len as u32, &vec![i as u8; len], None)
                .unwrap();
        }
        w.flush().unwrap();
        w.get_ref().clone()
    }

    /// Reads `bytes` to the end: the packets read, and the error that ended it.
    fn read_all(bytes: Vec<u8>) -> (usize, Option<String>) {
        let f = match CaptureFile::from_reader("cut.pcap", std::io::Cursor::new(bytes)) {
            Ok(f) => f,
            Err(e) => return (0, Some(e.to_string())),
        };
        let mut n = 0;
        for p in f {
            match p {
                Ok(_) => n += 1,
                Err(e) => return (n, Some(e.to_string())),
            }
        }
        (n, None)
    }

    #[test]
    fn a_truncated_pcap_says_what_was_cut_and_where() {
        let whole = three_records();
        // 24 + (16 + 100) + (16 + 200) + (16 + 300).
        assert_eq!(whole.len(), 672);
        assert_eq!(read_all(whole.clone()), (3, None));
        // The file header cut.
        let (n, e) = read_all(whole[..10].to_vec());
        assert_eq!(n, 0);
        let e = e.unwrap();
        assert!(
            e.contains("pcap file header cut short: 24 bytes expected, 10 present"),
            "{e}"
        );
        // The third record's header cut: it starts at byte 24 + 116 + 216 = 356.
        let (n, e) = read_all(whole[..356 + 9].to_vec());
        assert_eq!(n, 2);
        let e = e.unwrap();
        assert!(
            e.contains("after 2 packets: record 3 at byte 356: record header cut short: 16 bytes expected, 9 present"),
            "{e}"
        );
        // The second record's data cut: it starts at byte 140, its data at 156.
        let (n, e) = read_all(whole[..156 + 50].to_vec());
        assert_eq!(n, 1);
        let e = e.unwrap();
        assert!(
            e.contains(
                "record 2 at byte 140: packet data cut short: 200 bytes expected, 50 present"
            ),
            "{e}"
        );
        // A record claiming more than any capture holds is refused before it is read.
        let mut hostile = whole[..24 + 16].to_vec();
        hostile[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let (_, e) = read_all(hostile);
        let e = e.unwrap();
        assert!(
            e.contains("record 1 at byte 24: it claims 4294967295 captured bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_truncated_pcapng_block_is_named_as_cut() {
        let whole = pcapng(9, 1);
        let (n, e) = read_all(whole[..whole.len() - 20].to_vec());
        assert_eq!(n, 0);
        let e = e.unwrap();
        assert!(
            e.contains("the block after packet 0 cut short: the file ends inside it"),
            "{e}"
        );
    }

    #[test]
    fn an_overflowing_time_stamp_is_named_as_such_and_a_bad_unit_as_a_bad_unit() {
        // Whole seconds (if_tsresol 0): 2^40 s is past what 64-bit nanoseconds hold.
        let e = first(pcapng(0, 1 << 40)).unwrap_err().to_string();
        assert!(
            e.contains("timestamp 1099511627776 in units of 10^-0 s (if_tsresol 0x0) overflows"),
            "{e}"
        );
        assert!(!e.contains("unsupported"), "{e}");
        // The same unit with a time stamp that fits.
        let p = first(pcapng(0, 1_700_000_000)).unwrap();
        assert_eq!(p.ts_ns, 1_700_000_000_000_000_000);
        // A unit past 10^-19 s is one this reader does not convert.
        let e = first(pcapng(20, 1)).unwrap_err().to_string();
        assert!(e.contains("timestamp unit 0x14 unsupported"), "{e}");
    }
}
