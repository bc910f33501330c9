//! TFTP (UDP 69) as tcpdump 4.99's print-tftp.c prints it: the opcode, the file name, mode
//! and options of a request, a block number, an error's code and text.

use std::fmt::Write as _;

use super::nd::printztn;
use super::Payload;
use crate::dissect::field::be16;

/// Prints a TFTP packet.
pub fn print(out: &mut String, p: &Payload<'_>) {
    let _ = write!(out, "TFTP, length {}", p.len);
    if packet(out, p.data, p.len) != Some(true) {
        out.push_str(" [|tftp]");
    }
}

/// The packet after the length; `Some(false)` where tcpdump finds it short, `None` where a
/// field lies past the capture.
fn packet(out: &mut String, d: &[u8], len: usize) -> Option<bool> {
    if len < 2 {
        return Some(false);
    }
    let op = be16(d, 0)?;
    let name = match op {
        1 => "RRQ",
        2 => "WRQ",
        3 => "DATA",
        4 => "ACK",
        5 => "ERROR",
        6 => "OACK",
        _ => {
            let _ = write!(out, ", tftp-#{op}");
            return Some(true);
        }
    };
    let _ = write!(out, ", {name}");
    let (mut at, mut left) = (2, len - 2);
    // A NUL-terminated string at `at` of at most `left` bytes: the bytes it took, or 0.
    let mut string = |out: &mut String, at: &mut usize, left: &mut usize| {
        let used = printztn(out, d.get(*at..).unwrap_or_default(), *left);
        *at += used;
        *left -= used;
        used
    };
    match op {
        1 | 2 => {
            if left == 0 {
                return Some(false);
            }
            out.push_str(" \"");
            let used = string(out, &mut at, &mut left);
            out.push('"');
            if used == 0 || left == 0 {
                return Some(false);
            }
            out.push(' ');
            if string(out, &mut at, &mut left) == 0 {
                return Some(false);
            }
            options(out, d, at, left, &mut string)
        }
        6 => options(out, d, at, left, &mut string),
        3 | 4 if left < 2 => Some(false),
        3 | 4 => {
            let _ = write!(out, " block {}", be16(d, at)?);
            Some(true)
        }
        _ => error(out, d, left, &mut string),
    }
}

type Strings<'a> = dyn FnMut(&mut String, &mut usize, &mut usize) -> usize + 'a;

/// The option names and values after a request's mode, or an OACK's.
fn options(
    out: &mut String,
    d: &[u8],
    mut at: usize,
    mut left: usize,
    string: &mut Strings<'_>,
) -> Option<bool> {
    while left != 0 {
        if *d.get(at)? != 0 {
            out.push(' ');
        }
        if string(out, &mut at, &mut left) == 0 {
            return Some(false);
        }
    }
    Some(true)
}

/// An error's code and message.
fn error(out: &mut String, d: &[u8], mut left: usize, string: &mut Strings<'_>) -> Option<bool> {
    if left < 2 {
        return Some(false);
    }
    let _ = match be16(d, 2)? {
        c @ 0..=7 => {
            let names = [
                "EUNDEF",
                "ENOTFOUND",
                "EACCESS",
                "ENOSPACE",
                "EBADOP",
                "EBADID",
                "EEXISTS",
                "ENOUSER",
            ];
            write!(out, " {}", names.get(usize::from(c)).unwrap_or(&""))
        }
        c => write!(out, " tftp-err-#{c} \""),
    };
    left -= 2;
    if left == 0 {
        return Some(false);
    }
    out.push_str(" \"");
    let mut at = 4;
    let used = string(out, &mut at, &mut left);
    out.push('"');
    Some(used != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(data: &[u8]) -> String {
        super::super::payload::printed(print, data, (40000, 69), 0)
    }

    #[test]
    fn requests_blocks_and_errors() {
        assert_eq!(
            text(b"\0\x01boot.img\0octet\0blksize\x001428\0"),
            "TFTP, length 30, RRQ \"boot.img\" octet blksize 1428"
        );
        assert_eq!(text(b"\0\x03\0\x07data"), "TFTP, length 8, DATA block 7");
        assert_eq!(
            text(b"\0\x05\0\x01nope\0"),
            "TFTP, length 9, ERROR ENOTFOUND \"nope\""
        );
        assert_eq!(text(b"\0\x01boot"), "TFTP, length 6, RRQ \"boot\" [|tftp]");
        assert_eq!(text(b"\0\x09"), "TFTP, length 2, tftp-#9");
    }
}
