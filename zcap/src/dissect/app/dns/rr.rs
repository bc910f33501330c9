//! Questions and resource records (`ns_qprint`, `ns_rprint`) and the EDNS options of an OPT
//! record (`eopt_print`).

use std::fmt::Write;

use super::super::super::field::{v4, v6};
use super::ctx::{Ctx, Res, Stop};
use super::tables;

const T_A: u16 = 1;
const T_NS: u16 = 2;
const T_CNAME: u16 = 5;
const T_SOA: u16 = 6;
const T_PTR: u16 = 12;
const T_MX: u16 = 15;
const T_TXT: u16 = 16;
const T_AAAA: u16 = 28;
const T_SRV: u16 = 33;
const T_A6: u16 = 38;
const T_DNAME: u16 = 39;
const T_OPT: u16 = 41;
const T_UNSPECA: u16 = 104;
const T_TSIG: u16 = 250;
const T_URI: u16 = 256;
const C_IN: u32 = 1;
/// mDNS's QU bit in a question's class, its cache-flush bit in a record's.
const C_TOP: u32 = 0x8000;

/// What `rdata` needs of a record besides its data's place.
struct Rr {
    typ: u16,
    class: u32,
    opt_flags: u16,
}

impl Ctx<'_, '_> {
    /// A question (`ns_qprint`): ` TYPE[ CLASS][ (QU|QM)]? name`; the position after it.
    pub(super) fn qprint(&mut self, cp: usize, bp: usize) -> Res {
        let at = self.nskip(cp).filter(|&at| self.has(at, 4));
        let at = at.ok_or(Stop::Null)?;
        self.out.push(' ');
        tables::rr_type(self.out, self.be16(at).unwrap_or_default());
        let raw = u32::from(self.be16(at + 2).unwrap_or_default());
        let class = if self.mdns { raw & !C_TOP } else { raw };
        if class != C_IN {
            self.out.push(' ');
            tables::class(self.out, class);
        }
        if self.mdns {
            self.out
                .push_str(if raw & C_TOP != 0 { " (QU)" } else { " (QM)" });
        }
        self.out.push_str("? ");
        Ok(self.fqdn(cp, bp)? + 4)
    }

    /// A resource record (`ns_rprint`): with `-v` its name, then its class, TTL (`-vvv`),
    /// type and data; the position after it, or the capture's end when its name or fixed
    /// part is cut.
    pub(super) fn rprint(&mut self, cp: usize, bp: usize) -> Res {
        let cp = if self.verbose > 0 {
            self.out.push(' ');
            self.fqdn(cp, bp)?
        } else {
            match self.nskip(cp) {
                Some(at) => at,
                None => return Ok(self.m.len()),
            }
        };
        if !self.has(cp, 10) {
            return Ok(self.m.len());
        }
        let typ = self.be16(cp).unwrap_or_default();
        let raw = u32::from(self.be16(cp + 2).unwrap_or_default());
        let class = if self.mdns { raw & !C_TOP } else { raw };
        if class != C_IN && typ != T_OPT {
            self.out.push(' ');
            tables::class(self.out, class);
        }
        if self.mdns && raw & C_TOP != 0 {
            self.out.push_str(" (Cache flush)");
        }
        let mut opt_flags = 0;
        if typ == T_OPT {
            opt_flags = self.be16(cp + 6).unwrap_or_default();
        } else if self.verbose > 2 {
            self.out.push_str(" [");
            tables::relts(self.out, self.be32(cp + 4).unwrap_or_default());
            self.out.push(']');
        }
        let len = usize::from(self.be16(cp + 8).unwrap_or_default());
        let (cp, rp) = (cp + 10, cp + 10 + len);
        self.out.push(' ');
        tables::rr_type(self.out, typ);
        if rp > self.m.len() {
            return Err(Stop::Null);
        }
        let rr = Rr {
            typ,
            class,
            opt_flags,
        };
        self.rdata(&rr, cp, len, bp)?;
        Ok(rp)
    }

    /// A record's data of `len` bytes at `cp`, for the types tcpdump shows.
    fn rdata(&mut self, rr: &Rr, cp: usize, len: usize, bp: usize) -> Result<(), Stop> {
        match rr.typ {
            T_A => {
                let a = v4(self.m, cp).ok_or(Stop::Null)?;
                let _ = write!(self.out, " {a}");
            }
            T_NS | T_CNAME | T_PTR | T_DNAME => {
                self.out.push(' ');
                self.fqdn(cp, bp)?;
            }
            T_SOA if self.verbose > 0 => self.soa(cp, bp)?,
            T_MX => {
                self.out.push(' ');
                let pref = self.be16(cp).ok_or(Stop::Null)?;
                self.fqdn(cp + 2, bp)?;
                let _ = write!(self.out, " {pref}");
            }
            T_TXT => {
                let (mut at, rp) = (cp, cp + len);
                while at < rp {
                    self.out.push_str(" \"");
                    at = self.cprint(at)?;
                    self.out.push('"');
                }
            }
            T_SRV => {
                self.out.push(' ');
                if !self.has(cp, 6) {
                    return Err(Stop::Null);
                }
                self.fqdn(cp + 6, bp)?;
                let f = |at| self.be16(at).unwrap_or_default();
                let (port, prio, weight) = (f(cp + 4), f(cp), f(cp + 2));
                let _ = write!(self.out, ":{port} {prio} {weight}");
            }
            T_AAAA => {
                let a = v6(self.m, cp).ok_or(Stop::Null)?;
                self.out.push(' ');
                tables::ipv6(self.out, a.octets());
            }
            T_A6 => self.a6(cp, bp)?,
            T_URI => self.uri(cp, len)?,
            T_OPT => self.opt(rr, cp, cp + len)?,
            T_UNSPECA if !self.has(cp, len) || !self.printn(cp, len) => {
                return Err(Stop::Null);
            }
            T_TSIG if self.verbose > 0 => self.tsig(cp, bp)?,
            _ => {}
        }
        Ok(())
    }

    /// SOA's names and five numbers (`-v`).
    fn soa(&mut self, cp: usize, bp: usize) -> Result<(), Stop> {
        self.out.push(' ');
        let cp = self.fqdn(cp, bp)?;
        self.out.push(' ');
        let cp = self.fqdn(cp, bp)?;
        if !self.has(cp, 20) {
            return Err(Stop::Null);
        }
        for k in 0..5 {
            let v = self.be32(cp + 4 * k).unwrap_or_default();
            let _ = write!(self.out, " {v}");
        }
        Ok(())
    }

    /// A6: the prefix length, the address's suffix, the prefix's name.
    fn a6(&mut self, cp: usize, bp: usize) -> Result<(), Stop> {
        let pbit = self.byte(cp).ok_or(Stop::Null)?;
        let pbyte = usize::from(pbit & !7) / 8;
        if pbit > 128 {
            let _ = write!(self.out, " {pbit}(bad plen)");
            return Ok(());
        }
        if pbit < 128 {
            let mut a = [0u8; 16];
            let src = self.m.get(cp + 1..cp + 17 - pbyte).ok_or(Stop::Trunc)?;
            for (d, s) in a.iter_mut().skip(pbyte).zip(src) {
                *d = *s;
            }
            let _ = write!(self.out, " {pbit} ");
            tables::ipv6(self.out, a);
        }
        if pbit > 0 {
            self.out.push(' ');
            self.fqdn(cp + 17 - pbyte, bp)?;
        }
        Ok(())
    }

    /// URI: priority, weight and the target's bytes.
    fn uri(&mut self, cp: usize, len: usize) -> Result<(), Stop> {
        if !self.has(cp, len) {
            return Err(Stop::Null);
        }
        let prio = self.be16(cp).ok_or(Stop::Trunc)?;
        let weight = self.be16(cp + 2).ok_or(Stop::Trunc)?;
        let _ = write!(self.out, " {prio} {weight} ");
        // A length under 4 wraps, as tcpdump's u_int does: the rest of the capture.
        let n = (len as u32).wrapping_sub(4) as usize;
        if !self.printn(cp + 4, n) {
            return Err(Stop::Null);
        }
        Ok(())
    }

    /// TSIG (`-v`): the algorithm's name, fudge, MAC length, original id, error, other length.
    fn tsig(&mut self, cp: usize, bp: usize) -> Result<(), Stop> {
        self.out.push(' ');
        let mut cp = self.fqdn(cp, bp)? + 6;
        for (name, skip) in [
            ("fudge", false),
            ("maclen", true),
            ("origid", false),
            ("error", false),
            ("otherlen", false),
        ] {
            let v = self.be16(cp).ok_or(Stop::Null)?;
            let _ = write!(self.out, " {name}={v}");
            cp += 2 + if skip { usize::from(v) } else { 0 };
        }
        Ok(())
    }

    /// OPT: the UDP size (the class), `DO`, and the options in brackets.
    fn opt(&mut self, rr: &Rr, cp: usize, rp: usize) -> Result<(), Stop> {
        let _ = write!(self.out, " UDPsize={}", rr.class);
        if rr.opt_flags & 0x8000 != 0 {
            self.out.push_str(" DO");
        }
        if cp < rp {
            self.out.push_str(" [");
            let mut cp = cp;
            while cp < rp {
                cp = self.eopt(cp)?;
                if cp < rp {
                    self.out.push(',');
                }
            }
            self.out.push(']');
        }
        Ok(())
    }

    /// One EDNS option (`eopt_print`); the position after it.
    fn eopt(&mut self, cp: usize) -> Res {
        let opt = self.be16(cp).ok_or(Stop::Null)?;
        tables::edns_opt(self.out, opt);
        let len = usize::from(self.be16(cp + 2).ok_or(Stop::Null)?);
        let cp = cp + 4;
        let data = self.m.get(cp..cp + len).ok_or(Stop::Null)?;
        if len > 0 {
            self.out.push(' ');
            self.eopt_data(opt, cp, data)?;
        }
        Ok(cp + len)
    }
}
