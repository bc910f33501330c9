//! Multipath TCP's option (RFC 8684) as tcpdump 4.99 prints it inside `options [...]`.

use std::fmt::Write as _;

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// The option `opt` (from its kind byte, its length's worth), in a segment with TCP `flags`:
/// its length, subtype name and fields. `false` where tcpdump calls it bad.
pub fn mptcp(out: &mut String, opt: &[u8], flags: u8) -> bool {
    let len = opt.len();
    if len < 3 {
        return false;
    }
    let sub = (opt[2] >> 4).min(8);
    let names = [
        "capable",
        "join",
        "dss",
        "add-addr",
        "rem-addr",
        "prio",
        "fail",
        "fast-close",
        "unknown",
    ];
    let _ = write!(out, " {len} {}", names[usize::from(sub)]);
    let r = Reader(opt);
    match sub {
        0 => capable(out, r, flags),
        1 => join(out, r, flags),
        2 => dss(out, r, flags),
        3 => add_addr(out, r),
        4 => {
            if len < 4 {
                return false;
            }
            out.push_str(" id");
            for id in &opt[3..] {
                let _ = write!(out, " {id}");
            }
            true
        }
        5 => {
            if len != 3 && len != 4 {
                return false;
            }
            let backup = opt[2] & 1 != 0;
            out.push_str(if backup { " backup" } else { " non-backup" });
            if len == 4 {
                let _ = write!(out, " id {}", opt[3]);
            }
            true
        }
        6 | 7 => {
            if len != 12 {
                return false;
            }
            let word = if sub == 6 { " seq " } else { " key 0x" };
            out.push_str(word);
            let v = r.be64(4);
            let _ = if sub == 6 {
                write!(out, "{v}")
            } else {
                write!(out, "{v:x}")
            };
            true
        }
        _ => true,
    }
}

/// Checked big-endian reads in the option (zero past its end, which the callers' length
/// checks exclude).
#[derive(Clone, Copy)]
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn be(&self, at: usize, n: usize) -> u64 {
        self.0
            .get(at..at + n)
            .map_or(0, |b| b.iter().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    }
    fn be64(&self, at: usize) -> u64 {
        self.be(at, 8)
    }
    fn be32(&self, at: usize) -> u64 {
        self.be(at, 4)
    }
    fn u8(&self, at: usize) -> u8 {
        self.0.get(at).copied().unwrap_or(0)
    }
}

fn capable(out: &mut String, r: Reader<'_>, flags: u8) -> bool {
    let len = r.0.len();
    let fits = ((len == 12 || len == 4) && flags & SYN != 0)
        || ((len == 20 || len == 22) && flags & (SYN | ACK) == ACK);
    if !fits {
        return false;
    }
    let version = r.u8(2) & 0xf;
    if version > 1 {
        let _ = write!(out, " Unknown Version ({version})");
        return true;
    }
    let _ = write!(out, " v{version}");
    if r.u8(3) & 0x80 != 0 {
        out.push_str(" csum");
    }
    if len == 12 || len >= 20 {
        let _ = write!(out, " {{0x{:x}", r.be64(4));
        if len >= 20 {
            let _ = write!(out, ",0x{:x}", r.be64(12));
        }
        out.push('}');
    }
    true
}

fn join(out: &mut String, r: Reader<'_>, flags: u8) -> bool {
    let len = r.0.len();
    let fits = (len == 12 && flags & SYN != 0)
        || (len == 16 && flags & (SYN | ACK) == (SYN | ACK))
        || (len == 24 && flags & ACK != 0);
    if !fits {
        return false;
    }
    if len != 24 {
        if r.u8(2) & 1 != 0 {
            out.push_str(" backup");
        }
        let _ = write!(out, " id {}", r.u8(3));
    }
    match len {
        12 => {
            let _ = write!(out, " token 0x{:x} nonce 0x{:x}", r.be32(4), r.be32(8));
        }
        16 => {
            let _ = write!(out, " hmac 0x{:x} nonce 0x{:x}", r.be64(4), r.be32(12));
        }
        _ => {
            out.push_str(" hmac 0x");
            for b in r.0.get(4..24).unwrap_or_default() {
                let _ = write!(out, "{b:02x}");
            }
        }
    }
    true
}

/// A number of 8 bytes (`wide`) or 4 at `at`, if `left` holds it.
fn dss_number(out: &mut String, r: Reader<'_>, at: &mut usize, wide: bool) -> bool {
    let n = if wide { 8 } else { 4 };
    if r.0.len() < *at + n {
        return false;
    }
    let _ = write!(out, "{}", r.be(*at, n));
    *at += n;
    true
}

fn dss(out: &mut String, r: Reader<'_>, flags: u8) -> bool {
    let len = r.0.len();
    if len < 4 || flags & SYN != 0 {
        return false;
    }
    let f = r.u8(3);
    if f & 0x10 != 0 {
        out.push_str(" fin");
    }
    let mut at = 4;
    if f & 0x01 != 0 {
        out.push_str(" ack ");
        if !dss_number(out, r, &mut at, f & 0x02 != 0) {
            return false;
        }
    }
    if f & 0x04 != 0 {
        out.push_str(" seq ");
        if !dss_number(out, r, &mut at, f & 0x08 != 0) {
            return false;
        }
        if len < at + 4 {
            return false;
        }
        let _ = write!(out, " subseq {}", r.be32(at));
        at += 4;
        if len < at + 2 {
            return false;
        }
        let _ = write!(out, " len {}", r.be(at, 2));
        at += 2;
        if len >= at + 2 {
            let _ = write!(out, " csum 0x{:x}", r.be(at, 2));
            at += 2;
        }
    }
    at == len
}

fn add_addr(out: &mut String, r: Reader<'_>) -> bool {
    let len = r.0.len();
    if ![8, 10, 16, 18, 20, 22, 28, 30].contains(&len) {
        return false;
    }
    let echo = match r.u8(2) & 0xf {
        6 => "v0-ip6",
        4 => "v0-ip4",
        1 => "v1-echo",
        0 => "v1",
        _ => "[bad version/echo]",
    };
    let _ = write!(out, " {echo} id {}", r.u8(3));
    let v4 = len <= 18;
    let (addr_end, port) = if v4 {
        let a = r.0.get(4..8).unwrap_or_default();
        let _ = write!(out, " {}.{}.{}.{}", a[0], a[1], a[2], a[3]);
        (8, len == 10 || len == 18)
    } else {
        let a: [u8; 16] =
            r.0.get(4..20)
                .and_then(|a| a.try_into().ok())
                .unwrap_or([0; 16]);
        let _ = write!(out, " {}", std::net::Ipv6Addr::from(a));
        (20, len == 22 || len == 30)
    };
    if port {
        let _ = write!(out, ":{}", r.be(addr_end, 2));
    }
    if matches!(len, 16 | 28) {
        let _ = write!(out, " hmac 0x{:x}", r.be64(addr_end));
    }
    if matches!(len, 18 | 30) {
        let _ = write!(out, " hmac 0x{:x}", r.be64(addr_end + 2));
    }
    true
}
