use super::*;
use proptest::collection::vec;
use proptest::prelude::*;

#[test]
fn pcap_and_pcapng_records_read_back_with_pcap_file() {
    let frame: Vec<u8> = (0..70u8).collect();
    for format in [Format::Pcap, Format::PcapNg] {
        let mut w = SaveFile::new(Vec::new(), format, 1, 96).flush_every(10);
        w.write(1_500_000_000_123_456_789, 70, &frame, None)
            .unwrap();
        w.write(
            1_500_000_001_000_000_001,
            1000,
            &frame,
            Some((0x2005, 0x8100)),
        )
        .unwrap();
        w.flush().unwrap();
        assert_eq!(w.committed().records, 2);
        let bytes = w.get_mut().clone();
        assert_eq!(w.committed().bytes, bytes.len() as u64);
        let mut got = Vec::new();
        match format {
            Format::Pcap => {
                let mut r = pcap_file::pcap::PcapReader::new(&bytes[..]).unwrap();
                assert_eq!(
                    r.header().ts_resolution,
                    pcap_file::TsResolution::NanoSecond
                );
                while let Some(p) = r.next_raw_packet() {
                    let p = p.unwrap();
                    got.push((
                        u64::from(p.ts_sec) * 1_000_000_000 + u64::from(p.ts_frac),
                        p.orig_len,
                        p.data.to_vec(),
                    ));
                }
            }
            Format::PcapNg => {
                let mut r = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).unwrap();
                while let Some(b) = r.next_block() {
                    if let pcap_file::pcapng::Block::EnhancedPacket(p) = b.unwrap() {
                        got.push((
                            p.timestamp.as_nanos() as u64,
                            p.original_len,
                            p.data.to_vec(),
                        ));
                    }
                }
            }
        }
        assert_eq!(got.len(), 2, "{format:?}");
        assert_eq!(got[0], (1_500_000_000_123_456_789, 70, frame.clone()));
        assert_eq!(got[1].0, 1_500_000_001_000_000_001);
        assert_eq!(got[1].1, 1004, "orig length includes the restored tag");
        assert_eq!(&got[1].2[12..16], &[0x81, 0x00, 0x20, 0x05]);
        assert_eq!(&got[1].2[16..], &frame[12..]);
    }
}

/// A writer that accepts `room` bytes, then fails like a full disk.
struct Full {
    data: Vec<u8>,
    room: usize,
}
impl Write for Full {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.data.len() >= self.room {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let n = b.len().min(self.room - self.data.len());
        self.data.extend_from_slice(&b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_full_disk_leaves_a_valid_prefix_of_whole_records() {
    let mut w = SaveFile::new(
        Full {
            data: Vec::new(),
            room: 1000,
        },
        Format::Pcap,
        1,
        65535,
    )
    .flush_every(150);
    let err = (0..100u64)
        .map(|i| w.write(i, 100, &[i as u8; 100], None))
        .find_map(Result::err)
        .expect("disk fills");
    assert_eq!(err.source.raw_os_error(), Some(libc::ENOSPC));
    let c = err.committed;
    // The caller cuts the file to `c.bytes`: header + whole records only.
    assert!(w.get_mut().data.len() as u64 >= c.bytes);
    let file = &w.get_mut().data[..c.bytes as usize];
    let mut r = pcap_file::pcap::PcapReader::new(file).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_raw_packet() {
        p.unwrap();
        n += 1;
    }
    assert_eq!(n, c.records);
    assert!(c.records > 0 && c.bytes < 1000);
}

/// [`Full`] taking whole vectored writes (as `writev` on a file does) up to its room.
struct FullVectored(Full);
impl Write for FullVectored {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.write(b)
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut n = 0;
        for b in bufs {
            match self.0.write(b) {
                Ok(k) => n += k,
                Err(e) if n == 0 => return Err(e),
                Err(_) => break,
            }
            if self.0.data.len() >= self.0.room {
                break;
            }
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A record for `write`: timestamp, original length, bytes, stripped tag.
type Record = (u64, u32, Vec<u8>, Option<(u16, u16)>);

/// Frames for the comparisons: (length, tagged?) -> records.
fn frames(shape: &[(usize, bool)]) -> Vec<Record> {
    shape
        .iter()
        .enumerate()
        .map(|(i, &(len, tagged))| {
            let data = (0..len).map(|j| (i * 7 + j) as u8).collect();
            let tag = tagged.then_some((0x2000 | i as u16 & 0xfff, 0x8100));
            (i as u64 * 1_000_001, len as u32 + 4, data, tag)
        })
        .collect()
}

/// What a writer ended with: failed, its output, what it committed, what it keeps.
type Observed = (bool, Vec<u8>, Committed, Vec<u8>, u64, usize);

/// `recs` through `write_many` in calls of `chunk` records (as blocks of a ring come),
/// then a flush.
fn many<W: Write>(
    mut w: SaveFile<W>,
    recs: &[Record],
    chunk: usize,
    out: impl Fn(&W) -> &[u8],
) -> Observed {
    let failed = recs.chunks(chunk).any(|c| {
        let mut taken = Taken::default();
        let r = w.write_many(
            c.iter()
                .map(|(t, o, d, v)| PacketRecord::new(*t, *o, &d[..]).with_vlan(*v)),
            &mut taken,
        );
        // All of them, or those up to the one a write failed on.
        let k = taken.records as usize;
        assert!(if r.is_ok() {
            k == c.len()
        } else {
            (1..=c.len()).contains(&k)
        });
        let took = &c[..k];
        assert_eq!(
            taken.wire_bytes,
            took.iter().map(|r| u64::from(r.1)).sum::<u64>()
        );
        let cut = took.iter().filter(|r| r.1 as usize > r.2.len()).count();
        assert_eq!(taken.truncated, cut as u64);
        r.is_err()
    }) || w.flush().is_err();
    let o = out(&w.out).to_vec();
    (failed, o, w.committed, w.buf, w.pending, w.header)
}

/// `recs` through `write`, one by one, then a flush.
fn one_by_one(mut w: SaveFile<Full>, recs: &[Record]) -> Observed {
    let failed = recs
        .iter()
        .any(|(t, o, d, v)| w.write(*t, *o, d, *v).is_err())
        || w.flush().is_err();
    (failed, w.out.data, w.committed, w.buf, w.pending, w.header)
}

/// The promise of a writer that ended as `got`, against the whole stream `want` (the
/// same records written without a full disk) whose records end at `ends`: on success the
/// stream; after a failure, a prefix of whole records committed and written, and the
/// records after them kept, from the first byte not committed to a record's end.
fn keeps_the_promise(got: &Observed, want: &[u8], ends: &[usize]) -> Result<(), String> {
    let (failed, out, c, kept, pending, header) = got;
    let c_at = c.bytes as usize;
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
    if !failed {
        check(out[..] == want[..] && kept.is_empty(), "the whole stream")?;
        return check(
            c_at == want.len() && c.records as usize + 1 == ends.len(),
            "counts",
        );
    }
    check(
        out.len() >= c_at && out[..c_at] == want[..c_at],
        "written prefix",
    )?;
    // Nothing whole (not even the file header) is committed as 0 bytes, 0 records.
    let nothing = c_at == 0 && c.records == 0;
    check(
        nothing || ends.get(c.records as usize) == Some(&c_at),
        "committed ends a record",
    )?;
    let kept_end = c_at + kept.len();
    check(
        want.get(c_at..kept_end) == Some(&kept[..]),
        "kept continues the stream",
    )?;
    check(
        ends.get((c.records + pending) as usize) == Some(&kept_end),
        "kept ends a record",
    )?;
    check(
        *header == 24usize.saturating_sub(c_at),
        "file header pending",
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// `write_many` (large frames referred to in place) keeps `write`'s promise — the
    /// stream on success; whole records committed and the rest kept after a disk fills —
    /// for writers that take vectored writes whole or one slice at a time, any flush
    /// size and any split into calls; one by one `write` is checked alike.
    #[test]
    fn write_many_keeps_the_promise_of_write(
        shape in vec((prop_oneof![0usize..80, 250usize..2000], any::<bool>()), 0..200),
        room in prop_oneof![20usize..4000, 10_000usize..200_000, Just(usize::MAX)],
        flush in prop_oneof![Just(1usize), 100usize..5000, Just(FLUSH_AT)],
        chunk in 1usize..70,
    ) {
        let recs = frames(&shape);
        let full = |room| Full { data: Vec::new(), room };
        let file = |w| SaveFile::new(w, Format::Pcap, 1, 65535).flush_every(flush);
        let want = one_by_one(file(full(usize::MAX)), &recs).1;
        let mut ends = vec![24];
        for (_, _, d, v) in &recs {
            let tag = if v.is_some() && d.len() >= 12 { 4 } else { 0 };
            ends.push(ends.last().unwrap() + 16 + d.len() + tag);
        }
        let got = [
            one_by_one(file(full(room)), &recs),
            many(file(full(room)), &recs, chunk, |w| &w.data),
            many(
                SaveFile::new(FullVectored(full(room)), Format::Pcap, 1, 65535)
                    .flush_every(flush),
                &recs,
                chunk,
                |w| &w.0.data,
            ),
        ];
        for (g, how) in got.iter().zip(["one by one", "many", "many, vectored"]) {
            if let Err(e) = keeps_the_promise(g, &want, &ends) {
                return Err(TestCaseError::fail(format!("{how}: {e}")));
            }
        }
        if room == usize::MAX {
            prop_assert_eq!(&got[1], &got[0]);
            prop_assert_eq!(&got[2], &got[0]);
        }
    }
}
