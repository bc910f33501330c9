//! Names and character strings: skipping a name (`ns_nskip`), printing one with its
//! compression pointers (`fqdn_print`), EDNS bit labels and `<character-string>`s, each byte
//! the way tcpdump's `fn_print_char` shows it.

use std::fmt::Write;

use super::ctx::{Ctx, Res, Stop};

/// The most characters tcpdump prints of a name (`MAXCDNAME`).
const MAXCDNAME: usize = 255;

const TYPE_MASK: u8 = 0xc0;
const TYPE_INDIR: u8 = 0xc0;
const TYPE_RESERVED: u8 = 0x80;
const TYPE_EDNS0: u8 = 0x40;
const EDNS0_ELT_BITLABEL: u8 = 0x01;

/// An EDNS bit label's length in bits (a zero byte means 256).
fn bitlen(b: u8) -> usize {
    if b == 0 {
        256
    } else {
        usize::from(b)
    }
}

impl Ctx<'_, '_> {
    /// Appends byte `c` as tcpdump shows it: `M-` for the high bit, `^` for a control.
    pub(super) fn print_char(&mut self, c: u8) {
        let mut c = c;
        if !c.is_ascii() {
            c &= 0x7f;
            self.out.push_str("M-");
        }
        if !(0x20..0x7f).contains(&c) {
            c ^= 0x40;
            self.out.push('^');
        }
        self.out.push(char::from(c));
    }

    /// Prints up to `n` bytes from `at`, as many as were captured; whether all `n` were.
    pub(super) fn printn(&mut self, at: usize, n: usize) -> bool {
        let end = at.saturating_add(n);
        let stop = end.min(self.m.len());
        for &c in self.m.get(at..stop).unwrap_or_default() {
            self.print_char(c);
        }
        stop == end || at >= end
    }

    /// The position after the name at `cp`, if it can be walked (`ns_nskip`).
    pub(super) fn nskip(&self, cp: usize) -> Option<usize> {
        let mut i = self.byte(cp)?;
        let mut cp = cp + 1;
        while i != 0 {
            match i & TYPE_MASK {
                TYPE_INDIR => return Some(cp + 1),
                TYPE_EDNS0 => {
                    if i & !TYPE_MASK != EDNS0_ELT_BITLABEL {
                        return None;
                    }
                    let bits = bitlen(self.byte(cp)?);
                    cp += 1 + bits.div_ceil(8);
                }
                TYPE_RESERVED => return None,
                _ => cp += usize::from(i),
            }
            i = self.byte(cp)?;
            cp += 1;
        }
        Some(cp)
    }

    /// An EDNS bit label's `\[x…/bits]` (`blabel_print`); the position after it.
    fn blabel(&mut self, cp: usize) -> Res {
        let bits = bitlen(self.byte(cp).ok_or(Stop::Null)?);
        let lim = cp + 1 + bits.div_ceil(4);
        self.out.push_str("\\[x");
        let (mut bitp, mut b) = (cp + 1, bits);
        while bitp < lim && b > 7 {
            let v = self.get(bitp)?;
            let _ = write!(self.out, "{v:02x}");
            b -= 8;
            bitp += 1;
        }
        if b > 4 {
            let tc = u32::from(self.get(bitp)?);
            let _ = write!(self.out, "{:02x}", tc & (0xff << (8 - b)));
        } else if b > 0 {
            let tc = u32::from(self.get(bitp)?);
            let _ = write!(self.out, "{:x}", ((tc >> 4) & 0x0f) & (0x0f << (4 - b)));
        }
        let _ = write!(self.out, "/{bits}]");
        Ok(lim)
    }

    /// The length of the label at `cp` as `fqdn_print` steps over it (`labellen`).
    fn labellen(&mut self, cp: usize) -> Res {
        let i = self.byte(cp).ok_or(Stop::Null)?;
        match i & TYPE_MASK {
            TYPE_EDNS0 => {
                let elt = i & !TYPE_MASK;
                if elt != EDNS0_ELT_BITLABEL {
                    let _ = write!(self.out, "<ELT {elt}>");
                    return Err(Stop::Null);
                }
                let bits = bitlen(self.byte(cp + 1).ok_or(Stop::Null)?);
                Ok(bits.div_ceil(8) + 1)
            }
            TYPE_RESERVED => {
                self.out.push_str("<BAD LABEL TYPE>");
                Err(Stop::Null)
            }
            _ => Ok(usize::from(i)),
        }
    }

    /// Prints the name at `cp`, its pointers counted from `bp` (`fqdn_print`); the position
    /// after the name where it was read.
    pub(super) fn fqdn(&mut self, cp: usize, bp: usize) -> Res {
        let mut l = self.labellen(cp)?;
        let mut i = self.byte(cp).ok_or(Stop::Null)?;
        // A pointer must move backwards: below where the name started, then below the last
        // target (tcpdump's `max_offset`; a base after the name wraps, as its u_int does).
        let mut max_offset = cp.wrapping_sub(bp) as u32;
        let mut cp = cp + 1;
        let mut rp = (i & TYPE_MASK != TYPE_INDIR).then_some(cp + l);
        if i == 0 {
            self.out.push('.');
            return rp.ok_or(Stop::Null);
        }
        let (mut compress, mut name_chars) = (false, 0usize);
        while i != 0 && cp < self.m.len() {
            self.step()?;
            match i & TYPE_MASK {
                TYPE_INDIR => {
                    if !compress {
                        rp = Some(cp + 1);
                        compress = true;
                    }
                    let lo = self.byte(cp).ok_or(Stop::Null)?;
                    let offset = ((u32::from(i) << 8) | u32::from(lo)) & 0x3fff;
                    if offset >= max_offset {
                        self.out.push_str("<BAD PTR>");
                        return Err(Stop::Null);
                    }
                    max_offset = offset;
                    cp = bp + offset as usize;
                    i = self.byte(cp).ok_or(Stop::Null)?;
                    l = self.labellen(cp)?;
                    cp += 1;
                    continue;
                }
                TYPE_EDNS0 => {
                    // labellen let only the bit label through.
                    self.blabel(cp)?;
                }
                TYPE_RESERVED => {
                    self.out.push_str("<BAD LABEL TYPE>");
                    return Err(Stop::Null);
                }
                _ => self.label(cp, l, &mut name_chars)?,
            }
            cp += l;
            if name_chars <= MAXCDNAME {
                self.out.push('.');
            }
            name_chars += 1;
            i = self.byte(cp).ok_or(Stop::Null)?;
            l = self.labellen(cp)?;
            cp += 1;
            if !compress {
                rp = rp.map(|r| r + l + 1);
            }
        }
        if name_chars > MAXCDNAME {
            self.out.push_str("<DOMAIN NAME TOO LONG>");
        }
        rp.ok_or(Stop::Null)
    }

    /// One ordinary label of `l` bytes at `cp`, as much of it as the name's limit leaves.
    fn label(&mut self, cp: usize, l: usize, name_chars: &mut usize) -> Result<(), Stop> {
        let n = if *name_chars + l <= MAXCDNAME {
            l
        } else {
            MAXCDNAME.saturating_sub(*name_chars)
        };
        if n > 0 && !self.printn(cp, n) {
            return Err(Stop::Null);
        }
        *name_chars += l;
        Ok(())
    }

    /// A `<character-string>` at `cp` (`ns_cprint`); the position after it.
    pub(super) fn cprint(&mut self, cp: usize) -> Res {
        let n = usize::from(self.byte(cp).ok_or(Stop::Null)?);
        if !self.printn(cp + 1, n) {
            return Err(Stop::Null);
        }
        Ok(cp + 1 + n)
    }
}
