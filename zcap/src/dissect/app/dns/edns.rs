//! The data of one EDNS option, as tcpdump 4.99.3's `eopt_print` shows it.

use std::fmt::Write;

use super::ctx::{Ctx, Stop};
use super::tables::{self, Algs};

const E_DAU: u16 = 5;
const E_DHU: u16 = 6;
const E_N3U: u16 = 7;
const E_ECS: u16 = 8;
const E_EXPIRE: u16 = 9;
const E_COOKIE: u16 = 10;
const E_KEEPALIVE: u16 = 11;
const E_PADDING: u16 = 12;
const E_CHAIN: u16 = 13;
const E_KEYTAG: u16 = 14;

/// tcpdump's mark for a malformed field (`nd_print_invalid`).
pub(super) const INVALID: &str = " (invalid)";

impl Ctx<'_, '_> {
    /// Option `opt`'s `data` (at `cp` in the message; not empty).
    pub(super) fn eopt_data(&mut self, opt: u16, cp: usize, data: &[u8]) -> Result<(), Stop> {
        let len = data.len();
        match opt {
            E_ECS => ecs(self.out, data),
            E_COOKIE if len < 8 || (len > 8 && len < 16) || len > 40 => {
                self.out.push_str(INVALID);
            }
            E_COOKIE => {
                for (i, b) in data.iter().enumerate() {
                    if i == 8 {
                        self.out.push(' ');
                    }
                    let _ = write!(self.out, "{b:02x}");
                }
            }
            E_KEEPALIVE | E_EXPIRE if len != if opt == E_EXPIRE { 4 } else { 2 } => {
                self.out.push_str(INVALID);
            }
            E_KEEPALIVE => {
                // Tenths of a second, printed as "%0.1f sec".
                let v = data.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b));
                let _ = write!(self.out, "{}.{} sec", v / 10, v % 10);
            }
            E_EXPIRE => {
                let v = data.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b));
                let _ = write!(self.out, "{v} sec");
            }
            E_PADDING => {
                let _ = write!(self.out, "({len})");
            }
            E_KEYTAG if len % 2 != 0 => self.out.push_str(INVALID),
            E_KEYTAG => {
                for (i, t) in data.chunks_exact(2).enumerate() {
                    let sep = if i > 0 { " " } else { "" };
                    let _ = write!(self.out, "{sep}{}", u16::from_be_bytes([t[0], t[1]]));
                }
            }
            E_DAU | E_DHU | E_N3U => {
                let list = match opt {
                    E_DAU => Algs::Dau,
                    E_DHU => Algs::Dhu,
                    _ => Algs::N3u,
                };
                for (i, &a) in data.iter().enumerate() {
                    if i > 0 {
                        self.out.push(' ');
                    }
                    tables::alg(self.out, list, a);
                }
            }
            E_CHAIN => {
                // tcpdump ignores the name's end; only a cut bit label stops the line.
                if let Err(Stop::Trunc) = self.fqdn(cp, cp + len) {
                    return Err(Stop::Trunc);
                }
            }
            _ => {
                for b in data {
                    let _ = write!(self.out, "{b:02x}");
                }
            }
        }
        Ok(())
    }
}

/// EDNS Client Subnet: `address/source/scope`, or the invalid mark.
fn ecs(out: &mut String, data: &[u8]) {
    let (Some(&[f0, f1, src, scope]), Some(addr)) = (data.get(..4), data.get(4..)) else {
        out.push_str(INVALID);
        return;
    };
    let bits: usize = match u16::from_be_bytes([f0, f1]) {
        1 => 32,
        2 => 128,
        _ => {
            out.push_str(INVALID);
            return;
        }
    };
    let (src, scope) = (usize::from(src), usize::from(scope));
    if addr.len() > bits / 8 || src > bits || scope > bits || src.div_ceil(8) != addr.len() {
        out.push_str(INVALID);
        return;
    }
    let mut padded = [0u8; 16];
    for (d, s) in padded.iter_mut().zip(addr) {
        *d = *s;
    }
    if bits == 32 {
        let [a, b, c, d, ..] = padded;
        let _ = write!(out, "{a}.{b}.{c}.{d}");
    } else {
        tables::ipv6(out, padded);
    }
    let _ = write!(out, "/{src}/{scope}");
}
