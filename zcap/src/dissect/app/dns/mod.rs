//! DNS, mDNS and DNS over TCP as tcpdump 4.99.3's `domain_print` (print-domain.c) prints
//! them: the header's id, opcode, response code and flags, the section counts, the questions
//! and answers (every section with `-vv`, names with `-v`, TTLs with `-vvv`), EDNS's OPT
//! record and its options, mDNS's QU and cache-flush bits, and tcpdump's marks for a cut or
//! malformed message (` [|domain]`, ` (invalid)`, `<BAD PTR>`...).
//!
//! Positions are offsets in the message as captured (`Ctx::m`, whose end is tcpdump's
//! `snapend`); like tcpdump's pointers they may run past it, and every read is checked.
//! tcpdump's two ways of giving up are `ctx::Stop`'s: a printer's NULL return (`Null`) and a
//! failed `GET_` read's jump out of the packet (`Trunc`); both end the line with the
//! truncation mark, except where tcpdump goes on after a NULL.

use std::fmt::Write;

use super::Payload;

mod ctx;
mod edns;
mod name;
mod rr;
mod tables;
#[cfg(test)]
mod tests;

use ctx::{Ctx, Res, Stop, STEPS, TRUNC};

/// DNS over UDP (port 53).
pub fn udp(out: &mut String, p: &Payload<'_>) {
    domain(out, p, false, false);
}

/// Multicast DNS (UDP port 5353): classes' top bit is QU or cache flush.
pub fn mdns(out: &mut String, p: &Payload<'_>) {
    domain(out, p, false, true);
}

/// DNS over TCP (port 53): the 2-byte length prefix, then the message; printed after the
/// TCP line's `, length N` with a space, not `": "`, as tcpdump does.
pub fn tcp(out: &mut String, p: &Payload<'_>) {
    domain(out, p, true, false);
}

/// tcpdump's `domain_print`.
fn domain(out: &mut String, p: &Payload<'_>, over_tcp: bool, mdns: bool) {
    let mut length = p.len;
    let mut m = p.data;
    if over_tcp {
        if length < 2 {
            let _ = write!(out, " [DNS over TCP: length {length} < 2]{}", edns::INVALID);
            return;
        }
        length -= 2;
        let Some(prefix) = super::super::field::be16(m, 0) else {
            p.jumped.set(true);
            out.push_str(TRUNC);
            return;
        };
        if usize::from(prefix) != length {
            let _ = write!(
                out,
                " [prefix length({prefix}) != length({length})]{}",
                edns::INVALID
            );
            return;
        }
        m = m.get(2..).unwrap_or_default();
        out.push(' ');
    }
    if length < 12 {
        let _ = write!(out, "domain [length {length} < 12]{}", edns::INVALID);
        return;
    }
    let mut c = Ctx {
        out,
        m,
        verbose: p.verbose,
        mdns,
        steps: STEPS,
    };
    if c.message().is_err() {
        // tcpdump checks the header before reading it (a cut there is marked in place); the
        // rest it reads with its GET_ macros, and a cut jumps out.
        p.jumped.set(m.len() >= 12);
        c.out.push_str(TRUNC);
    } else {
        let _ = write!(c.out, " ({length})");
    }
}

/// The header's counts.
#[derive(Clone, Copy)]
struct Counts {
    qd: u16,
    an: u16,
    ns: u16,
    ar: u16,
}

impl Ctx<'_, '_> {
    /// The message after its checks: a response or a request.
    fn message(&mut self) -> Result<(), Stop> {
        if self.m.len() < 12 {
            return Err(Stop::Trunc);
        }
        let f = |at| self.be16(at).unwrap_or_default();
        let (id, flags) = (f(0), f(2));
        let n = Counts {
            qd: f(4),
            an: f(6),
            ns: f(8),
            ar: f(10),
        };
        if flags & 0x8000 != 0 {
            self.response(id, flags, n)
        } else {
            self.request(id, flags, n)
        }
    }

    /// The response code with EDNS's upper bits from the first OPT record, if the sections
    /// before it can be walked.
    fn ext_rcode(&self, flags: u16, n: Counts) -> u16 {
        let rcode = flags & 0xf;
        let len = self.m.len();
        let mut cp = 12;
        for _ in 0..n.qd {
            match self.nskip(cp) {
                Some(at) if at + 4 < len => cp = at + 4,
                _ => return rcode,
            }
        }
        for _ in 0..u32::from(n.an) + u32::from(n.ns) {
            let Some(at) = self.nskip(cp).map(|at| at + 8) else {
                return rcode;
            };
            let Some(rdlen) = self.be16(at) else {
                return rcode;
            };
            cp = at + 2 + usize::from(rdlen);
            if cp >= len {
                return rcode;
            }
        }
        for _ in 0..n.ar {
            let Some(typ) = self.nskip(cp).and_then(|at| {
                cp = at + 4;
                self.be16(at)
            }) else {
                return rcode;
            };
            let Some(ext) = self.byte(cp) else {
                return rcode;
            };
            if typ == 41 {
                return rcode | u16::from(ext) << 4;
            }
            let Some(rdlen) = self.be16(cp + 4) else {
                return rcode;
            };
            cp += 6 + usize::from(rdlen);
            if cp >= len {
                return rcode;
            }
        }
        rcode
    }

    /// A response: its header, the questions (`-vv`: printed), the counts, the answers,
    /// then (`-vv`) the authority and additional sections.
    fn response(&mut self, id: u16, flags: u16, n: Counts) -> Result<(), Stop> {
        let rcode = self.ext_rcode(flags, n);
        let _ = write!(self.out, "{id}{}", op(flags));
        tables::rcode(self.out, rcode);
        for (bit, on, off) in [(0x0400, "*", ""), (0x0080, "", "-"), (0x0200, "|", "")] {
            self.out.push_str(if flags & bit != 0 { on } else { off });
        }
        if flags & 0x0020 != 0 {
            self.out.push('$');
        }
        if n.qd != 1 {
            let _ = write!(self.out, " [{}q]", n.qd);
        }
        let mut cp = 12;
        for i in 0..n.qd {
            if i != 0 {
                self.out.push(',');
            }
            if self.verbose > 1 {
                self.out.push_str(" q:");
                cp = self.qprint(cp, 0)?;
            } else {
                cp = self.nskip(cp).ok_or(Stop::Null)? + 4;
            }
        }
        let _ = write!(self.out, " {}/{}/{}", n.an, n.ns, n.ar);
        cp = self.section(cp, n.an, "")?;
        if self.verbose > 1 {
            cp = self.section(cp, n.ns, " ns:")?;
            self.section(cp, n.ar, " ar:")?;
        }
        Ok(())
    }

    /// A request: its header, its unusual counts, the questions, then (`-vv`) the other
    /// sections.
    fn request(&mut self, id: u16, flags: u16, n: Counts) -> Result<(), Stop> {
        let _ = write!(self.out, "{id}{}", op(flags));
        if flags & 0x0100 != 0 {
            self.out.push('+');
        }
        if flags & 0x0010 != 0 {
            self.out.push('%');
        }
        if flags & 0x6cf != 0 {
            let _ = write!(self.out, " [b2&3=0x{flags:x}]");
        }
        if (flags >> 11) & 0xf == 1 {
            if n.qd != 0 {
                let _ = write!(self.out, " [{}q]", n.qd);
            }
            if n.an != 1 {
                let _ = write!(self.out, " [{}a]", n.an);
            }
        } else {
            if n.an != 0 {
                let _ = write!(self.out, " [{}a]", n.an);
            }
            if n.qd != 1 {
                let _ = write!(self.out, " [{}q]", n.qd);
            }
        }
        if n.ns != 0 {
            let _ = write!(self.out, " [{}n]", n.ns);
        }
        if n.ar != 0 {
            let _ = write!(self.out, " [{}au]", n.ar);
        }
        let mut cp = 12;
        let mut left = n.qd;
        while left > 0 && (left == n.qd || cp < self.m.len()) {
            cp = self.qprint(cp, 0)?;
            left -= 1;
        }
        if left > 0 {
            return Err(Stop::Null);
        }
        if self.verbose > 1 {
            cp = self.section(cp, n.an, "")?;
            cp = self.section(cp, n.ns, " ns:")?;
            self.section(cp, n.ar, " ar:")?;
        }
        Ok(())
    }

    /// `count` records from `cp`, comma-separated, after `label` (for a labelled section,
    /// only if the capture goes on at `cp`); every one must be printed.
    fn section(&mut self, mut cp: usize, count: u16, label: &str) -> Res {
        let mut left = count;
        if left > 0 && (label.is_empty() || cp < self.m.len()) {
            self.out.push_str(label);
            cp = self.rprint(cp, 0)?;
            left -= 1;
            while cp < self.m.len() && left > 0 {
                self.out.push(',');
                cp = self.rprint(cp, 0)?;
                left -= 1;
            }
        }
        if left > 0 {
            return Err(Stop::Null);
        }
        Ok(cp)
    }
}

/// The opcode's suffix.
fn op(flags: u16) -> &'static str {
    tables::OPS
        .get(usize::from((flags >> 11) & 0xf))
        .copied()
        .unwrap_or_default()
}
