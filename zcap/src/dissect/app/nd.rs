//! The text helpers tcpdump's printers share (util-print.c's), as the application printers
//! need them: characters made visible, bounded strings, relative times, hex lines, MAC
//! addresses. Each reads only what the slice holds and says when it ran out.

use std::fmt::Write as _;

/// A byte as tcpdump shows it in text: `M-` for the high bit, `^` for a control character.
pub(super) fn print_char(out: &mut String, c: u8) {
    let mut c = c;
    if c >= 0x80 {
        c &= 0x7f;
        out.push_str("M-");
    }
    if !(0x20..=0x7e).contains(&c) {
        c ^= 0x40;
        out.push('^');
    }
    out.push(char::from(c));
}

/// `n` bytes of `d` as text (nd_printn); true when the capture ended first.
pub(super) fn printn(out: &mut String, d: &[u8], n: usize) -> bool {
    for &c in d.iter().take(n) {
        print_char(out, c);
    }
    d.len() < n
}

/// A NUL-terminated string in a field of `n` bytes (nd_printztn): the bytes used with the
/// NUL, or 0 when neither the field nor the capture held a NUL.
pub(super) fn printztn(out: &mut String, d: &[u8], n: usize) -> usize {
    for i in 0..n {
        match d.get(i) {
            None => return 0,
            Some(0) => return i + 1,
            Some(&c) => print_char(out, c),
        }
    }
    0
}

/// Up to `n` bytes of `d` as text, stopping at a NUL (nd_printjnp); `None` when the capture
/// ended first.
pub(super) fn printjnp(out: &mut String, d: &[u8], n: usize) -> Option<()> {
    for i in 0..n {
        match *d.get(i)? {
            0 => break,
            c => print_char(out, c),
        }
    }
    Some(())
}

/// `len` bytes as hex lines of 16, each started by `ident` and "0xOFFS: " (hex_print);
/// `None` when the capture held fewer (after printing what it held).
pub(super) fn hex_print(out: &mut String, ident: &str, d: &[u8], len: usize) -> Option<()> {
    let shown = d.get(..len).unwrap_or(d);
    for (line, chunk) in shown.chunks(16).enumerate() {
        let _ = write!(out, "{ident}0x{:04x}: ", line * 16);
        for pair in chunk.chunks(2) {
            match pair {
                [a, b] => {
                    let _ = write!(out, " {a:02x}{b:02x}");
                }
                [a] => {
                    let _ = write!(out, " {a:02x}");
                }
                _ => {}
            }
        }
    }
    (shown.len() == len).then_some(())
}

/// The IPv6 address at `at` as tcpdump writes it: as `std` does, but for an IPv4-compatible
/// one (the first 96 bits zero, the next 16 not), written "::a.b.c.d".
pub(super) fn ip6(d: &[u8], at: usize) -> Option<String> {
    let a = crate::dissect::field::v6(d, at)?;
    let w = a.segments();
    if let [0, 0, 0, 0, 0, 0, w6, _] = w.as_slice() {
        if *w6 != 0 {
            let [.., p, q, r, s] = a.octets();
            return Some(format!("::{p}.{q}.{r}.{s}"));
        }
    }
    Some(a.to_string())
}

/// The byte at `at`.
pub(super) fn u8at(d: &[u8], at: usize) -> Option<u8> {
    d.get(at).copied()
}

/// The big-endian 32-bit field at `at`.
pub(super) fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_tcpdumps_text() {
        let mut s = String::new();
        for c in [b'a', 0, 0x7f, 0x81, 0xe1] {
            print_char(&mut s, c);
        }
        assert_eq!(s, "a^@^?M-^AM-a");
        let mut s = String::new();
        assert!(printn(&mut s, b"ab", 3));
        assert_eq!(printztn(&mut s, b"cd\0e", 4), 3);
        assert_eq!(printztn(&mut s, b"cd", 4), 0);
        assert_eq!(s, "abcdcd");
        let mut s = String::new();
        assert!(hex_print(&mut s, "\n\t", &[1, 2, 3], 4).is_none());
        assert_eq!(s, "\n\t0x0000:  0102 03");
        let mut a = [0u8; 16];
        a[12..].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(ip6(&a, 0).unwrap(), "::1.2.3.4");
        a[12] = 0;
        assert_eq!(ip6(&a, 0).unwrap(), "::0.2.3.4");
        a[13] = 0;
        assert_eq!(ip6(&a, 0).unwrap(), "::304");
    }
}
