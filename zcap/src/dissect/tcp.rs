//! TCP as tcpdump 4.99 prints it after the endpoints: flags, sequence numbers (relative to
//! each direction's first unless `-S`), ack, window, urgent pointer, every option, the length,
//! `-v`'s checksum note and a RST's text, then the payload's protocol by port.

use std::fmt::Write as _;

use super::app::{self, Payload};
use super::field::{checksum, should_be};
use super::num;
use super::tcp_seq::{Base, Seqs};

/// tcpdump's flag letters, in its order.
const FLAGS: [(u8, char); 8] = [
    (0x01, 'F'),
    (0x02, 'S'),
    (0x04, 'R'),
    (0x08, 'P'),
    (0x10, '.'),
    (0x20, 'U'),
    (0x40, 'E'),
    (0x80, 'W'),
];
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;
const URG: u8 = 0x20;
const FIN: u8 = 0x01;
/// The text of a RST's payload tcpdump shows at most with `-v`.
const RST_TEXT: usize = 30;

/// A TCP segment inside its captured frame.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// The frame as captured.
    pub data: &'a [u8],
    /// Where the IP header starts.
    pub l3: usize,
    /// Where the TCP header starts.
    pub l4: usize,
    /// The segment's length by the IP header (TCP header and payload).
    pub len: usize,
    /// IPv6, else IPv4.
    pub v6: bool,
    /// Part of a fragmented datagram (no checksum is checked).
    pub fragmented: bool,
}

impl Segment<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.data.get(self.l4 + at).copied()
    }

    fn be16(&self, at: usize) -> Option<u16> {
        super::field::be16(self.data, self.l4 + at)
    }

    fn be32(&self, at: usize) -> Option<u32> {
        let b = self.data.get(self.l4 + at..self.l4 + at + 4)?;
        Some(u32::from_be_bytes(b.try_into().ok()?))
    }

    /// The source and destination addresses.
    fn addrs(&self) -> Option<(&[u8], &[u8])> {
        let (at, n) = if self.v6 { (8, 16) } else { (12, 4) };
        let a = self.data.get(self.l3 + at..self.l3 + at + 2 * n)?;
        Some(a.split_at(n))
    }

    /// The Internet checksum over the pseudo-header and the whole segment, if captured.
    fn sum(&self) -> Option<u16> {
        if self.v6 {
            return super::v6_sum(self.data, self.l3, self.l4, self.len, 6);
        }
        let seg = self.data.get(self.l4..self.l4 + self.len)?;
        let (src, dst) = self.addrs()?;
        Some({
            let len = (self.len as u16).to_be_bytes();
            checksum(&[src, dst, &[0, 6], &len, seg])
        })
    }
}

/// How segments are printed: the `-v` count and `-S`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// `-v` count.
    pub verbose: u8,
    /// `-S`: absolute sequence numbers (no conversation is kept).
    pub absolute: bool,
    /// Not `-K`: the checksum is verified (with `-v`).
    pub checksums: bool,
    /// `-q`: `tcp N` alone.
    pub quiet: bool,
    /// Without `-n` (for the payload's printers).
    pub names: bool,
}

/// Appends the segment's text after `a.p > b.q: `; `seqs` holds the conversations relative
/// numbers need (unused with `-S`). Returns whether tcpdump would have stopped printing by a
/// jump out of its printers, after which its `-x`/`-X`/`-A` dumps start at the link layer.
pub fn tcp(out: &mut String, seg: &Segment<'_>, style: Style, seqs: &mut Seqs) -> bool {
    match header(out, seg, style, seqs) {
        Ok(()) => false,
        Err(Cut::Header) => {
            out.push_str(" [|tcp]");
            false
        }
        Err(Cut::Jump) => {
            out.push_str(" [|tcp]");
            true
        }
        Err(Cut::Options) => {
            out.push_str(" [|tcp]>");
            false
        }
        Err(Cut::Printed) => true,
    }
}

/// The numbers a segment prints, and the bases its SACK blocks subtract.
struct Numbers {
    seq: u32,
    ack: u32,
    rev: bool,
    base: Base,
}

/// Everything up to the payload's protocol; a [`Cut`] where the capture ends inside what it
/// reads (the caller marks the truncation).
fn header(out: &mut String, seg: &Segment<'_>, style: Style, seqs: &mut Seqs) -> Result<(), Cut> {
    seg.data.get(seg.l4 + 19).ok_or(Cut::Header)?;
    let hlen = usize::from(seg.byte(12).ok_or(Cut::Header)? >> 4) * 4;
    let length = seg.len;
    if hlen < 20 {
        let _ = write!(
            out,
            " tcp {} [bad hdr length {hlen} - too short, < 20]",
            (length as u32).wrapping_sub(hlen as u32)
        );
        return Ok(());
    }
    if style.quiet {
        let _ = write!(out, "tcp {}", (length as u32).wrapping_sub(hlen as u32));
        if hlen > length {
            let _ = write!(out, " [bad hdr length {hlen} - too long, > {length}]");
        }
        return Ok(());
    }
    // The whole fixed header is captured (checked above).
    let [seq, ack] = [4, 8].map(|at| seg.be32(at).unwrap_or(0));
    let [win, sum_field, urp] = [14, 16, 18].map(|at| seg.be16(at).unwrap_or(0));
    let flags = seg.byte(13).unwrap_or(0);
    out.push_str("Flags [");
    if flags == 0 {
        out.push_str("none");
    }
    for (bit, c) in FLAGS {
        if flags & bit != 0 {
            out.push(c);
        }
    }
    out.push(']');
    let n = numbers(seg, style, seqs, flags, seq, ack);
    if hlen > length {
        let _ = write!(out, " [bad hdr length {hlen} - too long, > {length}]");
        return Ok(());
    }
    if style.verbose > 0 && style.checksums && !seg.fragmented {
        if let Some(sum) = seg.sum() {
            let field = sum_field;
            let _ = write!(out, ", cksum 0x{field:04x}");
            if sum != 0 {
                let _ = write!(out, " (incorrect -> 0x{:04x})", should_be(field, sum));
            } else {
                out.push_str(" (correct)");
            }
        }
    }
    let data_len = length - hlen;
    if style.verbose > 1 || data_len > 0 || flags & (SYN | FIN | RST) != 0 {
        out.push_str(", seq ");
        num::dec(out, n.seq);
        if data_len > 0 {
            out.push(':');
            num::dec(out, n.seq.wrapping_add(data_len as u32));
        }
    }
    if flags & ACK != 0 {
        out.push_str(", ack ");
        num::dec(out, n.ack);
    }
    out.push_str(", win ");
    num::dec(out, win);
    if flags & URG != 0 {
        out.push_str(", urg ");
        num::dec(out, urp);
    }
    if hlen > 20 && !options(out, seg, hlen, &n)? {
        return Ok(());
    }
    out.push_str(", length ");
    num::dec(out, data_len);
    if data_len == 0 {
        return Ok(());
    }
    payload(out, seg, style, flags, hlen, data_len)
}

/// The segment's numbers as printed: relative where tcpdump makes them so (a segment with
/// ACK, without `-S`).
fn numbers(
    seg: &Segment<'_>,
    style: Style,
    seqs: &mut Seqs,
    flags: u8,
    seq: u32,
    ack: u32,
) -> Numbers {
    let absolute = Numbers {
        seq,
        ack,
        rev: false,
        base: Base { seq: 0, ack: 0 },
    };
    let (Some((src, dst)), Some(sport), Some(dport)) = (seg.addrs(), seg.be16(0), seg.be16(2))
    else {
        return absolute;
    };
    if style.absolute || flags & ACK == 0 {
        return absolute;
    }
    let (key, rev) = Seqs::key(src, dst, sport, dport);
    let r = seqs.relative(key, rev, flags & SYN != 0, seq, ack);
    Numbers {
        seq: r.seq,
        ack: r.ack,
        rev: r.rev,
        base: r.base,
    }
}

/// After `, length N`: a RST's text with `-v`, else the payload's protocol by port.
fn payload(
    out: &mut String,
    seg: &Segment<'_>,
    style: Style,
    flags: u8,
    hlen: usize,
    data_len: usize,
) -> Result<(), Cut> {
    let start = seg.l4 + hlen;
    let captured = seg.data.len().saturating_sub(start);
    if seg.data.len() < start {
        let _ = write!(
            out,
            " [remaining caplen({}) < header length({hlen})]",
            seg.data.len().saturating_sub(seg.l4)
        );
        return Err(Cut::Jump);
    }
    let bytes = &seg.data[start..];
    let jumped = std::cell::Cell::new(false);
    if flags & RST != 0 && style.verbose > 0 {
        out.push_str(if captured >= data_len {
            " [RST"
        } else {
            " [!RST"
        });
        if data_len > RST_TEXT {
            out.push('+');
        }
        out.push(' ');
        for &c in bytes.iter().take(data_len.min(RST_TEXT)) {
            super::dump::print_char(out, c);
        }
        out.push(']');
        return Ok(());
    }
    let p = Payload {
        names: style.names,
        data: &bytes[..captured.min(data_len)],
        len: data_len,
        sport: seg.be16(0).unwrap_or(0),
        dport: seg.be16(2).unwrap_or(0),
        verbose: style.verbose,
        jumped: &jumped,
    };
    if let Some(print) = app::printer(app::TCP, &p) {
        print(out, &p);
    }
    if jumped.get() {
        return Err(Cut::Printed);
    }
    Ok(())
}

/// Where a segment's text stopped short: the capture ended inside what it reads, outside
/// the options or inside them (after which tcpdump closes with `>`).
enum Cut {
    /// A check before reading (tcpdump's ND_TCHECK).
    Header,
    /// A read past the capture (tcpdump's GET_ macros, which jump out of every printer).
    Jump,
    /// A check inside the options, after the first.
    Options,
    /// A payload's printer jumped out, its mark printed.
    Printed,
}

/// `, options [...]`, as tcpdump walks them: `[bad opt]` where an option's length is wrong
/// (then `false`: the line ends there), [`Cut::Options`] where the capture ends inside one.
fn options(out: &mut String, seg: &Segment<'_>, hlen: usize, n: &Numbers) -> Result<bool, Cut> {
    out.push_str(", options [");
    let mut left = hlen - 20;
    let mut at = 20;
    let mut first = true;
    // tcpdump's `ch`: after the first option, a cut or a bad option says so.
    let cut = |first: bool| if first { Cut::Header } else { Cut::Options };
    while left > 0 {
        if !first {
            out.push(',');
        }
        // A kind or a length past the capture ends the line at once (tcpdump's GET_U_1 jumps
        // out); data past it is checked first, then closed with `>` (its LENCHECK).
        let kind = seg.byte(at).ok_or(Cut::Jump)?;
        at += 1;
        let len = if kind <= 1 {
            1
        } else {
            let len = usize::from(seg.byte(at).ok_or(Cut::Jump)?);
            at += 1;
            if len < 2 || len > left {
                bad_option(out, first);
                return Ok(false);
            }
            left -= 1;
            len
        };
        left -= 1;
        match option_name(kind) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "unknown-{kind}");
            }
        }
        let datalen = match option(out, seg, kind, len, at, left, n) {
            Opt::Read(d) => d,
            Opt::Bad => {
                bad_option(out, first);
                return Ok(false);
            }
            Opt::Cut => return Err(cut(first)),
        };
        at += datalen;
        left -= datalen;
        let spec = datalen + if kind <= 1 { 1 } else { 2 };
        if spec != len {
            let _ = write!(out, "[len {len}]");
        }
        first = false;
        if kind == 0 {
            break;
        }
    }
    out.push(']');
    Ok(true)
}

/// tcpdump's `[bad opt]`, closed once an option was printed; the line ends there.
fn bad_option(out: &mut String, first: bool) {
    out.push_str("[bad opt]");
    if !first {
        out.push(']');
    }
}

/// What reading one option's data gave.
enum Opt {
    /// Its data's length, printed.
    Read(usize),
    /// Its length is wrong for its kind.
    Bad,
    /// The capture ends inside it.
    Cut,
}

/// One option's data after its name: `at` is where it starts, `left` what the header holds
/// from there, `len` the option's own length.
fn option(
    out: &mut String,
    seg: &Segment<'_>,
    kind: u8,
    len: usize,
    at: usize,
    left: usize,
    n: &Numbers,
) -> Opt {
    // tcpdump's LENCHECK: more than the header holds is a bad option, more than the capture
    // holds a cut.
    let check = |l: usize| -> Result<(), Opt> {
        if l > left {
            Err(Opt::Bad)
        } else if seg.data.len() < seg.l4 + at + l {
            Err(Opt::Cut)
        } else {
            Ok(())
        }
    };
    let byte = |i: usize| seg.byte(at + i).unwrap_or(0);
    let be32 = |i: usize| seg.be32(at + i).unwrap_or(0);
    let fixed = |out: &mut String, n: usize| -> Result<usize, Opt> {
        check(n)?;
        match kind {
            2 => {
                out.push(' ');
                num::dec(out, seg.be16(at).unwrap_or(0));
                Ok(())
            }
            3 => {
                out.push(' ');
                num::dec(out, byte(0));
                Ok(())
            }
            8 => {
                out.push_str(" val ");
                num::dec(out, be32(0));
                out.push_str(" ecr ");
                num::dec(out, be32(4));
                Ok(())
            }
            20 => write!(out, " cap {:02x} id {}", byte(0), byte(1)),
            28 => {
                let v = u32::from(seg.be16(at).unwrap_or(0));
                let mins = if v & 1 != 0 { (v >> 1) * 60 } else { v >> 1 };
                write!(out, " 0x{v:x} {mins}")
            }
            19 => {
                md5(out, seg, at);
                Ok(())
            }
            _ => write!(out, " {}", be32(0)),
        }
        .map_err(|_| Opt::Bad)?;
        Ok(n)
    };
    let r = match kind {
        0 | 1 | 4 => Ok(0),
        2 | 20 | 28 => fixed(out, 2),
        3 => fixed(out, 1),
        6 | 7 | 11..=13 => fixed(out, 4),
        8 => fixed(out, 8),
        19 => fixed(out, 16),
        5 => sack(out, seg, len - 2, at, &check, n),
        29 => tcp_ao(out, len - 2, &check, byte),
        _ => variable(out, seg, kind, len, at, &check),
    };
    r.map_or_else(|e| e, Opt::Read)
}

/// The options whose data is as long as the option says: MPTCP, Fast Open (and its
/// experimental kind), unknown kinds in hex.
fn variable(
    out: &mut String,
    seg: &Segment<'_>,
    kind: u8,
    len: usize,
    at: usize,
    check: &dyn Fn(usize) -> Result<(), Opt>,
) -> Result<usize, Opt> {
    let data = |from: usize| {
        seg.data
            .get(seg.l4 + from..seg.l4 + at + len - 2)
            .unwrap_or_default()
    };
    match kind {
        30 => {
            check(len - 2)?;
            // The option from its kind byte on: MPTCP's printer reads its own length.
            super::mptcp::mptcp(out, data(at - 2), seg.byte(13).unwrap_or(0))
                .then_some(len - 2)
                .ok_or(Opt::Bad)
        }
        34 => {
            check(len - 2)?;
            out.push(' ');
            fastopen(out, data(at), false);
            Ok(len - 2)
        }
        254 => {
            check(len - 2)?;
            if len - 2 < 2 {
                return Err(Opt::Bad);
            }
            let magic = seg.be16(at).unwrap_or(0);
            out.push('-');
            if magic == 0xf989 {
                fastopen(out, data(at + 2), true);
            } else {
                let _ = write!(out, "{magic:04x}");
            }
            Ok(len - 2)
        }
        _ => {
            let datalen = len - 2;
            if datalen > 0 {
                out.push_str(" 0x");
            }
            for i in 0..datalen {
                check(i + 1)?;
                let _ = write!(out, "{:02x}", seg.byte(at + i).unwrap_or(0));
            }
            Ok(datalen)
        }
    }
}

/// SACK blocks, each edge less the base of the direction it acknowledges.
fn sack(
    out: &mut String,
    seg: &Segment<'_>,
    datalen: usize,
    at: usize,
    check: &dyn Fn(usize) -> Result<(), Opt>,
    n: &Numbers,
) -> Result<usize, Opt> {
    if datalen % 8 != 0 {
        out.push_str(" invalid sack");
        return Ok(datalen);
    }
    let _ = write!(out, " {} ", datalen / 8);
    let base = if n.rev { n.base.seq } else { n.base.ack };
    for i in (0..datalen).step_by(8) {
        check(i + 4)?;
        check(i + 8)?;
        let s = seg.be32(at + i).unwrap_or(0).wrapping_sub(base);
        let e = seg.be32(at + i + 4).unwrap_or(0).wrapping_sub(base);
        let _ = write!(out, "{{{s}:{e}}}");
    }
    Ok(datalen)
}

/// TCP-AO (RFC 5925): key ids and the MAC.
fn tcp_ao(
    out: &mut String,
    datalen: usize,
    check: &dyn Fn(usize) -> Result<(), Opt>,
    byte: impl Fn(usize) -> u8,
) -> Result<usize, Opt> {
    if datalen < 2 {
        out.push_str(" (invalid)");
        return Ok(datalen);
    }
    check(1)?;
    let _ = write!(out, " keyid {}", byte(0));
    check(2)?;
    let _ = write!(out, " rnextkeyid {}", byte(1));
    if datalen > 2 {
        out.push_str(" mac 0x");
        for i in 2..datalen {
            check(i + 1)?;
            let _ = write!(out, "{:02x}", byte(i));
        }
    }
    Ok(datalen)
}

/// The MD5 signature option (RFC 2385): tcpdump, built with libcrypto and given no secret,
/// says it cannot check and shows the digest.
fn md5(out: &mut String, seg: &Segment<'_>, at: usize) {
    out.push(' ');
    if seg.data.len() < seg.l4 + seg.len {
        out.push_str("snaplen too short, ");
    } else {
        out.push_str("shared secret not supplied with -M, ");
    }
    out.push_str("can't check - ");
    for i in 0..16 {
        let _ = write!(out, "{:02x}", seg.byte(at + i).unwrap_or(0));
    }
}

/// A Fast Open option's data (RFC 7413; `exp`: the experimental kind's, named `tfo`).
fn fastopen(out: &mut String, data: &[u8], exp: bool) {
    if exp {
        out.push_str("tfo");
    }
    if data.is_empty() {
        out.push_str(" cookiereq");
    } else if data.len() % 2 != 0 || data.len() < 4 || data.len() > 16 {
        out.push_str(" (invalid)");
    } else {
        out.push_str(" cookie ");
        for b in data {
            let _ = write!(out, "{b:02x}");
        }
    }
}

/// tcpdump's name of an option kind (`None`: `unknown-N`).
fn option_name(kind: u8) -> Option<&'static str> {
    Some(match kind {
        0 => "eol",
        1 => "nop",
        2 => "mss",
        3 => "wscale",
        4 => "sackOK",
        5 => "sack",
        6 => "echo",
        7 => "echoreply",
        8 => "TS",
        11 => "cc",
        12 => "ccnew",
        13 => "",
        19 => "md5",
        20 => "scps",
        28 => "uto",
        29 => "tcp-ao",
        30 => "mptcp",
        34 => "tfo",
        254 => "exp",
        _ => return None,
    })
}
