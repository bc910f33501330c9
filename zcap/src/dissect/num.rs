//! Numbers and addresses written straight into a line, without `core::fmt`'s machinery:
//! a line holds a dozen of them, and formatting them was most of a line's cost.

use std::net::{IpAddr, Ipv4Addr};

/// An integer in decimal.
pub fn dec(out: &mut String, v: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// A byte as two lower-case hex digits.
pub fn hex2(out: &mut String, b: u8) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.push(char::from(DIGITS[usize::from(b >> 4)]));
    out.push(char::from(DIGITS[usize::from(b & 0xf)]));
}

/// An IPv4 address, dotted.
pub fn ipv4(out: &mut String, a: Ipv4Addr) {
    for (i, o) in a.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        dec(out, o);
    }
}

/// An address as `std` writes it (IPv6's compressed form through `Display`).
pub fn ip(out: &mut String, a: IpAddr) {
    match a {
        IpAddr::V4(v4) => ipv4(out, v4),
        IpAddr::V6(v6) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_core_fmt_writes_them() {
        let mut s = String::new();
        dec(&mut s, 4_294_967_295u32);
        s.push(' ');
        hex2(&mut s, 0x0a);
        s.push(' ');
        ipv4(&mut s, Ipv4Addr::new(198, 18, 0, 255));
        s.push(' ');
        ip(&mut s, "2001:db8::1".parse().unwrap());
        assert_eq!(s, "4294967295 0a 198.18.0.255 2001:db8::1");
    }
}
