//! SCTP (RFC 9260) as tcpdump 4.99 prints it after the endpoints: `sctp`, then each chunk
//! numbered, its type named and, for DATA, INIT, INIT ACK and SACK, its fields —
//! `sctp (1) [INIT] [init tag: 1] ...` and `, (2) ...` for the next chunk, or each chunk on
//! its own line (`\n\t1) ...`) with `-vv`, where DATA's payload is dumped too. Lengths are
//! followed as tcpdump follows them, wrong ones reported in its words; a chunk not captured
//! whole ends the line with ` [|sctp]`.

use std::fmt::Write as _;

use super::field::be16;

/// The common header's length.
const HEADER: usize = 12;
/// A chunk's type, flags and length.
const CHUNK: usize = 4;
/// DATA's fields after the chunk header: TSN, stream, sequence, payload protocol.
const DATA_PART: u16 = 12;
/// INIT's and INIT ACK's fixed fields.
const INIT_PART: u16 = 16;
/// SACK's fixed fields.
const SACK_PART: u16 = 12;
/// tcpdump's mark of a packet cut short.
const TRUNC: &str = " [|sctp]";

/// The ForCES channels tcpdump names by port.
fn forces_channel(port: u16) -> Option<&'static str> {
    match port {
        6704 => Some("ForCES HP"),
        6705 => Some("ForCES MP"),
        6706 => Some("ForCES LP"),
        _ => None,
    }
}

/// A chunk type's name (tcpdump's sctp_chunkid_str).
fn chunk_name(id: u8) -> Option<&'static str> {
    Some(match id {
        0x00 => "DATA",
        0x01 => "INIT",
        0x02 => "INIT ACK",
        0x03 => "SACK",
        0x04 => "HB REQ",
        0x05 => "HB ACK",
        0x06 => "ABORT",
        0x07 => "SHUTDOWN",
        0x08 => "SHUTDOWN ACK",
        0x09 => "OP ERR",
        0x0a => "COOKIE ECHO",
        0x0b => "COOKIE ACK",
        0x0c => "ECN ECHO",
        0x0d => "ECN CWR",
        0x0e => "SHUTDOWN COMPLETE",
        0xc0 => "FOR CUM TSN",
        0xc1 => "REL CTRL",
        0xc2 => "REL CTRL ACK",
        _ => return None,
    })
}

/// A DATA chunk's payload protocol's name (tcpdump's PayloadProto_idents).
fn ppid_name(ppid: u32) -> Option<&'static str> {
    Some(match ppid {
        1 => "ISDN Q.921",
        2 => "M2UA",
        3 => "M3UA",
        4 => "SUA",
        5 => "M2PA",
        6 => "V5.2",
        7 => "H.248",
        8 => "BICC",
        9 => "TALI",
        10 => "DUA",
        11 => "ASAP",
        12 => "ENRP",
        13 => "H.323",
        14 => "Q.IPC",
        15 => "SIMCO",
        16 => "DDPSC",
        17 => "DDPSSC",
        18 => "S1AP",
        19 => "RUA",
        20 => "HNBAP",
        21 => "ForCES HP",
        22 => "ForCES MP",
        23 => "ForCES LP",
        24 => "SBc-AP",
        25 => "NBAP",
        27 => "X2AP",
        _ => return None,
    })
}

fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// What tcpdump prints instead of the endpoints and the chunks when the common header is
/// missing: `truncated-sctp - N bytes missing!` when the IP length (`len`) leaves less than
/// it, ` [|sctp]` when the capture (`data`, from the SCTP header on) holds less. `None`
/// when the header is there: the endpoints and [`sctp`] follow.
pub fn header_fault(data: &[u8], len: usize) -> Option<String> {
    if len < HEADER {
        Some(format!("truncated-sctp - {} bytes missing!", HEADER - len))
    } else if data.len() < HEADER {
        Some(TRUNC.to_string())
    } else {
        None
    }
}

/// How the chunks are printed: `-v`'s count, and whether DATA's payload dump is suppressed
/// (tcpdump's `-q`, `-x`, `-X`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// `-v` count.
    pub verbose: u8,
    /// No payload dump (only `[Payload]`).
    pub suppress: bool,
}

/// Where the chunk walk is: the offset in the capture, the bytes the IP length leaves
/// (tcpdump's unsigned count, wrapping as its does), and whether a ForCES port or payload
/// was seen.
struct Walk<'a> {
    d: &'a [u8],
    at: usize,
    left: u32,
    forces: bool,
}

impl Walk<'_> {
    fn skip(&mut self, n: u16) {
        self.at += usize::from(n);
        self.left = self.left.wrapping_sub(u32::from(n));
    }
}

/// How one chunk's printing ended.
enum End {
    /// On to the next chunk.
    Next,
    /// The line ends here (a length tcpdump calls bogus).
    Stop,
    /// A read past the capture: ` [|sctp]`.
    Cut,
}

/// The SCTP packet in `data` (from its common header on, at most what the IP length
/// covers), `len` bytes long by the IP header, printed after `a.p > b.q: ` as tcpdump's
/// sctp_print does. The header must be there (see [`header_fault`]).
pub fn sctp(out: &mut String, data: &[u8], len: usize, style: Style) {
    out.push_str("sctp");
    let (Some(sport), Some(dport)) = (be16(data, 0), be16(data, 2)) else {
        out.push_str(TRUNC);
        return;
    };
    let mut w = Walk {
        d: data,
        at: HEADER,
        left: u32::try_from(len.saturating_sub(HEADER)).unwrap_or(u32::MAX),
        forces: false,
    };
    for port in [sport, dport] {
        if let Some(name) = forces_channel(port) {
            let _ = write!(out, "[{name}]");
            w.forces = true;
        }
    }
    let mut sep = if style.verbose >= 2 { "\n\t" } else { " (" };
    let mut count: u32 = 0;
    // Each turn moves on by a captured chunk (at least 4 bytes) or ends the walk.
    while w.left != 0 {
        count += 1;
        match chunk(out, &mut w, sep, count, style) {
            End::Next => {}
            End::Stop => return,
            End::Cut => {
                out.push_str(TRUNC);
                return;
            }
        }
        if style.verbose < 2 {
            sep = ", (";
        }
    }
}

/// One chunk: its checks, number and name, its fields, its padding.
fn chunk(out: &mut String, w: &mut Walk<'_>, sep: &str, n: u32, style: Style) -> End {
    if w.left < CHUNK as u32 {
        let _ = write!(out, "{sep}{n}) [chunk descriptor cut off at end of packet]");
        return End::Stop;
    }
    let (Some(&id), Some(&flags), Some(clen)) =
        (w.d.get(w.at), w.d.get(w.at + 1), be16(w.d, w.at + 2))
    else {
        return End::Cut;
    };
    if usize::from(clen) < CHUNK {
        let _ = write!(
            out,
            "{sep}{n}) [Bad chunk length {clen}, < size of chunk descriptor]"
        );
        return End::Stop;
    }
    let align = (4 - clen % 4) % 4;
    if w.left < u32::from(align) {
        let _ = write!(
            out,
            "{sep}{n}) [Bad chunk length {clen}, > remaining data in packet]"
        );
        return End::Stop;
    }
    if w.d.len() < w.at + usize::from(clen) {
        return End::Cut;
    }
    w.skip(CHUNK as u16);
    let mut rest = clen - CHUNK as u16;
    let _ = write!(out, "{sep}{n}) ");
    match chunk_name(id) {
        Some(name) => {
            let _ = write!(out, "[{name}] ");
        }
        None => {
            let _ = write!(out, "[Unknown chunk type: 0x{id:x}] ");
        }
    }
    let done = match id {
        0x00 => data_chunk(out, w, (flags, clen, &mut rest), style),
        0x01 | 0x02 => init_chunk(out, w, clen, &mut rest),
        0x03 => sack_chunk(out, w, clen, &mut rest),
        _ => Some(true),
    };
    match done {
        None => return End::Cut,
        Some(false) => return End::Stop,
        Some(true) => {}
    }
    w.skip(rest);
    if align != 0 {
        if w.d.len() < w.at + usize::from(align) {
            return End::Cut;
        }
        w.skip(align);
    }
    End::Next
}

/// A DATA chunk's flags and fields (and with `-vv` its payload); `rest` is what is left of
/// the chunk. `Some(false)`: a bogus length ended the line; `None`: cut.
fn data_chunk(
    out: &mut String,
    w: &mut Walk<'_>,
    chunk: (u8, u16, &mut u16),
    style: Style,
) -> Option<bool> {
    let (flags, clen, rest) = chunk;
    let marks = [(0x04, "(U)"), (0x02, "(B)"), (0x01, "(E)")];
    for (bit, mark) in marks {
        if flags & bit != 0 {
            out.push_str(mark);
        }
    }
    if flags & 0x07 != 0 {
        out.push(' ');
    }
    if *rest < DATA_PART {
        let _ = write!(out, "bogus chunk length {clen}]");
        return Some(false);
    }
    let at = w.at;
    let ppid = be32(w.d, at + 8)?;
    let _ = write!(out, "[TSN: {}] ", be32(w.d, at)?);
    let _ = write!(out, "[SID: {}] ", be16(w.d, at + 4)?);
    let _ = write!(out, "[SSEQ {}] ", be16(w.d, at + 6)?);
    match ppid_name(ppid) {
        Some(name) => {
            let _ = write!(out, "[PPID {name}] ");
        }
        None => {
            let _ = write!(out, "[PPID 0x{ppid:x}] ");
        }
    }
    w.forces |= matches!(ppid, 21..=23);
    w.skip(DATA_PART);
    *rest -= DATA_PART;
    let size = *rest;
    if size == 0 {
        let _ = write!(out, "bogus chunk length {clen}]");
        return Some(false);
    }
    // tcpdump hands ForCES to its own printer, and M3UA (with -vv) to M3UA's: neither is
    // reproduced here, their payload is left out as without -vv.
    if !w.forces && style.verbose >= 2 && ppid != 3 {
        out.push_str("[Payload");
        if !style.suppress {
            out.push(':');
            let payload = w.d.get(w.at..w.at + usize::from(size))?;
            super::dump::hex(out, payload, true);
        }
        out.push(']');
    }
    w.skip(size);
    *rest = 0;
    Some(true)
}

/// INIT's and INIT ACK's fixed fields (their parameters are not printed).
fn init_chunk(out: &mut String, w: &mut Walk<'_>, clen: u16, rest: &mut u16) -> Option<bool> {
    if *rest < INIT_PART {
        let _ = write!(out, "bogus chunk length {clen}]");
        return Some(false);
    }
    let at = w.at;
    let _ = write!(out, "[init tag: {}] ", be32(w.d, at)?);
    let _ = write!(out, "[rwnd: {}] ", be32(w.d, at + 4)?);
    let _ = write!(out, "[OS: {}] ", be16(w.d, at + 8)?);
    let _ = write!(out, "[MIS: {}] ", be16(w.d, at + 10)?);
    let _ = write!(out, "[init TSN: {}] ", be32(w.d, at + 12)?);
    w.skip(INIT_PART);
    *rest -= INIT_PART;
    Some(true)
}

/// A SACK's fields, its gap blocks and duplicate TSNs, each on a line of its own.
fn sack_chunk(out: &mut String, w: &mut Walk<'_>, clen: u16, rest: &mut u16) -> Option<bool> {
    if *rest < SACK_PART {
        let _ = write!(out, "bogus chunk length {clen}]");
        return Some(false);
    }
    let at = w.at;
    let cum = be32(w.d, at)?;
    let gaps = be16(w.d, at + 8)?;
    let dups = be16(w.d, at + 10)?;
    let _ = write!(out, "[cum ack {cum}] ");
    let _ = write!(out, "[a_rwnd {}] ", be32(w.d, at + 4)?);
    let _ = write!(out, "[#gap acks {gaps}] ");
    let _ = write!(out, "[#dup tsns {dups}] ");
    w.skip(SACK_PART);
    *rest -= SACK_PART;
    // Bounded by the counts and by the chunk's length.
    let mut i: u16 = 0;
    while *rest != 0 && i < gaps {
        if *rest < 4 {
            let _ = write!(out, "bogus chunk length {clen}]");
            return Some(false);
        }
        let start = cum.wrapping_add(u32::from(be16(w.d, w.at)?));
        let end = cum.wrapping_add(u32::from(be16(w.d, w.at + 2)?));
        i += 1;
        let _ = write!(
            out,
            "\n\t\t[gap ack block #{i}: start = {start}, end = {end}] "
        );
        w.skip(4);
        *rest -= 4;
    }
    let mut i: u16 = 0;
    while *rest != 0 && i < dups {
        if *rest < 4 {
            let _ = write!(out, "bogus chunk length {clen}]");
            return Some(false);
        }
        i += 1;
        let _ = write!(out, "\n\t\t[dup TSN #{i}: {}] ", be32(w.d, w.at)?);
        w.skip(4);
        *rest -= 4;
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(chunks: &[&[u8]]) -> Vec<u8> {
        let mut p = vec![0x13, 0x88, 0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 0];
        for c in chunks {
            p.extend_from_slice(c);
        }
        p
    }

    fn text(p: &[u8], len: usize, verbose: u8) -> String {
        let mut s = String::new();
        sctp(
            &mut s,
            p,
            len,
            Style {
                verbose,
                suppress: false,
            },
        );
        s
    }

    const INIT: [u8; 20] = [
        1, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 0, 1, 0, 1, 0, 0, 0, 1,
    ];

    #[test]
    fn init_and_layouts() {
        let p = packet(&[&INIT, &[0x0b, 0, 0, 4]]);
        assert_eq!(
            text(&p, p.len(), 0),
            "sctp (1) [INIT] [init tag: 1] [rwnd: 65535] [OS: 1] [MIS: 1] [init TSN: 1] , (2) [COOKIE ACK] "
        );
        assert!(text(&p, p.len(), 2).starts_with("sctp\n\t1) [INIT] "));
        assert!(text(&p, p.len(), 2).contains("\n\t2) [COOKIE ACK] "));
    }

    #[test]
    fn data_sack_and_faults() {
        let data = [
            0, 3, 0, 17, 0, 0, 0, 1, 0, 2, 0, 3, 0, 0, 0, 3, b'x', 0, 0, 0,
        ];
        let sack = [
            3, 0, 0, 24, 0, 0, 0, 10, 0, 0, 1, 0, 0, 1, 0, 1, 0, 2, 0, 3, 0, 0, 0, 9,
        ];
        let p = packet(&[&data, &sack]);
        let t = text(&p, p.len(), 2);
        assert!(t.contains("[DATA] (B)(E) [TSN: 1] [SID: 2] [SSEQ 3] [PPID M3UA] "));
        assert!(t.contains("[gap ack block #1: start = 12, end = 13] "));
        assert!(t.contains("[dup TSN #1: 9] "));
        // The blocks are listed at every verbosity.
        assert!(text(&p, p.len(), 0).ends_with("[dup TSN #1: 9] "));
        // Cut inside a chunk, bad lengths, unknown type.
        assert_eq!(text(&p[..20], p.len(), 0), "sctp [|sctp]");
        let bad = packet(&[&[0x55, 0, 0, 2]]);
        assert_eq!(
            text(&bad, bad.len(), 0),
            "sctp (1) [Bad chunk length 2, < size of chunk descriptor]"
        );
        let unk = packet(&[&[0x55, 0, 0, 4]]);
        assert_eq!(text(&unk, 16, 0), "sctp (1) [Unknown chunk type: 0x55] ");
        assert_eq!(
            text(&unk, 18, 0),
            "sctp (1) [Unknown chunk type: 0x55] , (2) [chunk descriptor cut off at end of packet]"
        );
        assert_eq!(
            header_fault(&p, 8).unwrap(),
            "truncated-sctp - 4 bytes missing!"
        );
        assert_eq!(header_fault(&p[..5], 40).unwrap(), " [|sctp]");
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut seed: u32 = 7;
        for _ in 0..2000 {
            let n = (seed % 64) as usize;
            let mut p = packet(&[]);
            for _ in 0..n {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                p.push((seed >> 16) as u8 & if seed % 3 == 0 { 0x1f } else { 0xff });
            }
            for v in 0..3 {
                let _ = text(&p, p.len() + (seed % 9) as usize, v);
                let _ = text(&p, p.len().saturating_sub(3), v);
            }
        }
    }
}
