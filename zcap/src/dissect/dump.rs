//! The payload dumps: `-x`/`-xx` (hex), `-X`/`-XX` (hex and ASCII), `-A` (ASCII).

use std::fmt::Write as _;

/// `-x`/`-X` (and, with the link header, `-xx`/`-XX`): 16 bytes per line, in 2-byte groups,
/// each line "\n\t0xOFFS: " — with `ascii`, the group column padded to 40 characters, two
/// spaces and the bytes as text ('.' for anything but a visible ASCII character).
pub fn hex(out: &mut String, data: &[u8], ascii: bool) {
    for (line, chunk) in data.chunks(16).enumerate() {
        let mut groups = String::with_capacity(40);
        for pair in chunk.chunks(2) {
            match pair {
                [a, b] => {
                    let _ = write!(groups, " {a:02x}{b:02x}");
                }
                [a] => {
                    let _ = write!(groups, " {a:02x}");
                }
                _ => {}
            }
        }
        let _ = write!(out, "\n\t0x{:04x}: ", line * 16);
        if ascii {
            let text: String = chunk
                .iter()
                .map(|&c| if c.is_ascii_graphic() { c as char } else { '.' })
                .collect();
            let _ = write!(out, "{groups:<40}  {text}");
        } else {
            out.push_str(&groups);
        }
    }
}

/// `-A`: a newline, then the bytes as text: visible characters, spaces, tabs and newlines
/// as they are, '.' for the rest; a carriage return only in the middle of a line.
pub fn ascii(out: &mut String, data: &[u8]) {
    out.push('\n');
    for (i, &c) in data.iter().enumerate() {
        if c == b'\r' {
            let left = data.len() - i - 1;
            if left > 1 && data[i + 1] != b'\n' {
                out.push('.');
            }
        } else if c.is_ascii_graphic() || matches!(c, b'\t' | b' ' | b'\n') {
            out.push(c as char);
        } else {
            out.push('.');
        }
    }
}

/// One byte as tcpdump's `fn_print_char` shows it: `M-` before a byte above ASCII, `^` before
/// a control character (shown as its letter, DEL as `?`).
pub fn print_char(out: &mut String, c: u8) {
    let mut c = c;
    if !c.is_ascii() {
        c &= 0x7f;
        out.push_str("M-");
    }
    if !(c.is_ascii_graphic() || c == b' ') {
        c ^= 0x40;
        out.push('^');
    }
    out.push(c as char);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_ascii_layouts() {
        let data: Vec<u8> = b"E\x00\x00\x2eHello, world!\r\nline\r".to_vec();
        let mut s = String::new();
        hex(&mut s, &data, false);
        assert_eq!(
            s,
            "\n\t0x0000:  4500 002e 4865 6c6c 6f2c 2077 6f72 6c64\n\t0x0010:  210d 0a6c 696e 650d"
        );
        let mut s = String::new();
        hex(&mut s, &data[..19], true);
        assert_eq!(
            s,
            "\n\t0x0000:  4500 002e 4865 6c6c 6f2c 2077 6f72 6c64  E...Hello,.world\n\t0x0010:  210d 0a                                  !.."
        );
        let mut s = String::new();
        ascii(&mut s, &data);
        assert_eq!(s, "\nE...Hello, world!\nline");
    }
}
