//! The per-packet paths of [`OutState`]: the short ones for one capture file or only a
//! count, and the general one for everything else (rotation, cooked records, lines, the
//! tee).

use std::io::Write;
use std::sync::atomic::Ordering;

use zcrx_capture::pcapfile::{SaveError, Taken};
use zcrx_capture::Delivered;
use zcrx_flowcache::LinkType;

use super::{OutState, Output, Plain, Sink};
use crate::print;
use crate::record::{sll2_header, write_cooked, Record};
use crate::rotate::Next;

/// A delivered packet as [`SaveFile::write_many`] takes it.
#[inline(always)]
fn record<'a>(d: Delivered<'a>) -> (u64, u32, &'a [u8], Option<(u16, u16)>) {
    let m = d.meta();
    let vlan = m.vlan_tci.map(|t| (t, m.vlan_tpid));
    (m.ts_ns, m.wire_len, d.data(), vlan)
}

impl OutState {
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
    /// from the ring to the file's buffer that the packet does not need: no rotation check,
    /// no cooked header, no line, no tee.
    #[inline]
    fn write_plain(&mut self, out: &Output, rec: &Record<'_>) -> bool {
        self.save_frame(out, rec.ts_ns, rec.wire_len, rec.data, rec.vlan)
    }

    /// [`OutState::write_plain`] from the parts of a record: what
    /// [`Writer::packet`](super::Writer) calls for an untagged frame on one shard, without
    /// building a [`Record`] (the parts stay in registers on the way to the capture file's
    /// own short path).
    #[inline(always)]
    pub(super) fn save_frame(
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
    pub(super) fn save_many<'a>(
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
    pub(super) fn count_frame(&mut self, out: &Output, wire_len: u32, captured_len: usize) -> bool {
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

    /// [`OutState::write`] for every sink: rotation, cooked records, lines, files, the merge,
    /// the tee.
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
        // Cooked (`-i any`): printed as the LINUX_SLL2 record it is written as.
        let sll2: Option<Vec<u8>> = rec
            .ll
            .filter(|_| {
                !matches!(self.sink, Sink::File(_) | Sink::Stdout(_)) || self.style.print_too
            })
            .map(|ll| [&sll2_header(&ll)[..], rec.data].concat());
        let shown = match &sll2 {
            Some(v) => Shown {
                link: LinkType::LinuxSll2,
                data: &v[..],
                len: rec.wire_len + 20,
            },
            None => Shown {
                link,
                data: rec.data,
                len: rec.wire_len,
            },
        };
        let text = matches!(self.sink, Sink::Text);
        if text || (self.style.print_too && matches!(self.sink, Sink::File(_))) {
            self.print_line(rec, &shown);
        }
        if let Err(e) = self.write_sink(rec, &shown) {
            self.error = Some(e);
            return false;
        }
        if let Some((tee, ids)) = self.tee.as_mut().filter(|t| t.0.get_ref().wanted()) {
            // Never fails: the server drops what it cannot take, and counts it.
            let _ = match &rec.ll {
                Some(ll) => write_cooked(tee, ids, rec, ll),
                None => tee.write(rec.ts_ns, rec.wire_len, rec.data, rec.vlan),
            };
        }
        self.count(out, rec.wire_len, rec.data.len())
    }

    /// `rec` as a text line on standard output (with its number, `-#`), shown as `shown`.
    fn print_line(&mut self, rec: &Record<'_>, shown: &Shown<'_>) {
        let ts_ns = rec.ts_ns;
        let (prev, first) = (
            self.prev_ns.unwrap_or(ts_ns),
            *self.first_ns.get_or_insert(ts_ns),
        );
        self.prev_ns = Some(ts_ns);
        let stamp = self.style.stamp.format(ts_ns, prev, first);
        let line = print::line_stamped(
            &stamp,
            shown.link,
            shown.len,
            shown.data,
            rec.vlan.map(|v| v.0),
            &self.style.detail,
        );
        let mut stdout = std::io::stdout().lock();
        if self.style.number {
            let _ = write!(stdout, "{:5}  ", self.captured + 1);
        }
        let _ = writeln!(stdout, "{line}");
    }

    /// `rec` to the sink: a record of the file or standard output (cooked ones on their
    /// interface's IDB), a JSON line, or nothing (text lines are printed before).
    fn write_sink(&mut self, rec: &Record<'_>, shown: &Shown<'_>) -> Result<(), SaveError> {
        let (ts_ns, wire_len, data, vlan) = (rec.ts_ns, rec.wire_len, rec.data, rec.vlan);
        match (&mut self.sink, &rec.ll) {
            (Sink::File(files), Some(ll)) => files.write_cooked(rec, ll),
            (Sink::Stdout(save), Some(ll)) => write_cooked(save, &mut self.stdout_ids, rec, ll),
            (Sink::File(files), None) => files.write(ts_ns, wire_len, data, vlan),
            (Sink::Stdout(save), None) => save.write(ts_ns, wire_len, data, vlan),
            (Sink::Text, _) | (Sink::Discard, _) => Ok(()),
            (Sink::Json, _) => {
                let line = print::json(shown.link, ts_ns, shown.len, shown.data, vlan.map(|v| v.0));
                let _ = writeln!(std::io::stdout().lock(), "{line}");
                Ok(())
            }
        }
    }
}

/// How a packet is printed: as read (`link`), or cooked packets as LINUX_SLL2 records.
struct Shown<'a> {
    link: LinkType,
    data: &'a [u8],
    /// The length on the wire, the SLL2 header's included.
    len: u32,
}
