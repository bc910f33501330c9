//! RESP, the Redis serialization protocol (TCP port 6379), as tcpdump 4.99's `resp_print`
//! shows it: every element of every pipelined message in turn, strings quoted, arrays flat.
//!
//! tcpdump parses with recursion over nested arrays; here one counter of the elements still
//! owed stands for its call stack (each element takes at least one byte, so the work is bounded
//! by the payload's length whatever the arrays claim).

use super::Payload;

/// Why parsing stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// tcpdump's local `goto trunc` (a length check failed).
    Trunc,
    /// A read past the capture: tcpdump's jump out.
    Jump,
}

/// What a `$` or `*` length line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    Value(u32),
    Null,
    Truncated,
    TooLarge,
    Negative,
    Invalid,
}

/// The payload being read and the line being written.
struct Reader<'a, 'o> {
    /// The captured bytes, never more than `len`.
    data: &'a [u8],
    /// The payload's length by the headers.
    len: usize,
    /// Where the next element starts.
    pos: usize,
    out: &'o mut String,
}

/// `: RESP` and the payload's elements.
pub fn resp(out: &mut String, p: &Payload<'_>) {
    out.push_str(": RESP");
    let data = &p.data[..p.data.len().min(p.len)];
    let mut r = Reader {
        data,
        len: p.len,
        pos: 0,
        out,
    };
    while r.pos < r.len {
        if let Err(stop) = r.message() {
            if stop == Stop::Jump {
                p.jumped.set(true);
            }
            r.out.push_str(" [|resp]");
            return;
        }
    }
}

impl Reader<'_, '_> {
    /// The byte at `at`, or the jump out when the capture ends before it.
    fn byte(&self, at: usize) -> Result<u8, Stop> {
        self.data.get(at).copied().ok_or(Stop::Jump)
    }

    /// One message: an element and, for an array, all its elements.
    fn message(&mut self) -> Result<(), Stop> {
        let mut owed: u64 = 1;
        while owed > 0 {
            owed -= 1;
            owed += u64::from(self.element()?);
        }
        Ok(())
    }

    /// One element; returns how many elements it announces (an array's length).
    fn element(&mut self) -> Result<u32, Stop> {
        if self.pos >= self.len {
            return Err(Stop::Trunc);
        }
        match self.byte(self.pos)? {
            b'+' | b'-' | b':' => self.line()?,
            b'$' => self.bulk_string()?,
            b'*' => return self.array(),
            _ => self.inline()?,
        }
        Ok(0)
    }

    /// Where the next `\r\n` at or after `from` starts (both bytes captured and in the
    /// payload).
    fn find_crlf(&self, from: usize) -> Result<usize, Stop> {
        let tail = self.data.get(from..).ok_or(Stop::Trunc)?;
        tail.windows(2)
            .position(|w| w == b"\r\n")
            .map(|i| from + i)
            .ok_or(Stop::Trunc)
    }

    /// ` "text"`, unprintable bytes as tcpdump escapes them.
    fn segment(&mut self, from: usize, to: usize) {
        self.out.push_str(" \"");
        for &c in &self.data[from..to] {
            print_char(self.out, c);
        }
        self.out.push('"');
    }

    /// A simple string, an error or an integer: the text up to `\r\n`.
    fn line(&mut self) -> Result<(), Stop> {
        let start = self.pos + 1;
        let end = self.find_crlf(start)?;
        self.segment(start, end);
        self.pos = end + 2;
        Ok(())
    }

    /// `$<length>\r\n<bytes>\r\n`, or a null, or what is wrong with the length.
    fn bulk_string(&mut self) -> Result<(), Stop> {
        let (length, end) = self.length(self.pos + 1)?;
        self.pos = end;
        let n = match length {
            Length::Value(n) => n as usize,
            other => return self.odd_length(other),
        };
        if n == 0 {
            self.out.push_str(" empty");
        } else {
            if self.len.saturating_sub(self.pos) < n || self.data.len().saturating_sub(self.pos) < n
            {
                return Err(Stop::Trunc);
            }
            self.segment(self.pos, self.pos + n);
            self.pos += n;
        }
        self.pos = self.find_crlf(self.pos)? + 2;
        Ok(())
    }

    /// `*<count>\r\n`: the count of elements that follow (an empty, null or bad array prints
    /// its word and announces none).
    fn array(&mut self) -> Result<u32, Stop> {
        let (length, end) = self.length(self.pos + 1)?;
        self.pos = end;
        match length {
            Length::Value(0) => {
                self.out.push_str(" empty");
                Ok(0)
            }
            Length::Value(n) => Ok(n),
            other => self.odd_length(other).map(|()| 0),
        }
    }

    /// The words for a length that is not a count.
    fn odd_length(&mut self, length: Length) -> Result<(), Stop> {
        self.out.push_str(match length {
            Length::Null => " null",
            Length::TooLarge => " length too large",
            Length::Negative => " length negative and not -1",
            Length::Invalid => " invalid",
            Length::Truncated => return Err(Stop::Trunc),
            Length::Value(_) => return Ok(()),
        });
        Ok(())
    }

    /// An inline command: a line of text ended by `\r`, `\n` or any run of them.
    fn inline(&mut self) -> Result<(), Stop> {
        let start = self.skip_line_ends(self.pos)?;
        let mut end = start;
        loop {
            if end >= self.len {
                return Err(Stop::Trunc);
            }
            if matches!(self.byte(end)?, b'\r' | b'\n') {
                break;
            }
            end += 1;
        }
        self.segment(start, end);
        self.pos = self.skip_line_ends(end)?;
        Ok(())
    }

    /// Past the `\r` and `\n` bytes at `from` (none is fine unless the payload or capture
    /// ends there).
    fn skip_line_ends(&self, from: usize) -> Result<usize, Stop> {
        let mut at = from;
        while let Some(&c) = self.data.get(at) {
            if c != b'\r' && c != b'\n' {
                return Ok(at);
            }
            at += 1;
        }
        if at == from {
            return Err(Stop::Trunc);
        }
        Ok(at)
    }

    /// The length line at `at` (`-1`, digits, `\r\n`) and where reading it stopped.
    fn length(&self, at: usize) -> Result<(Length, usize), Stop> {
        let mut i = at;
        if i >= self.len {
            return Ok((Length::Truncated, i));
        }
        let neg = self.byte(i)? == b'-';
        if neg {
            i += 1;
        }
        let mut value: u64 = 0;
        let mut digits = false;
        let c = loop {
            if i >= self.len {
                return Ok((Length::Truncated, i));
            }
            let c = self.byte(i)?;
            if !c.is_ascii_digit() {
                break c;
            }
            // Saturated well above i32::MAX: only "above i32::MAX" matters past it.
            value = (value * 10 + u64::from(c - b'0')).min(1 << 40);
            digits = true;
            i += 1;
        };
        if !digits || c != b'\r' {
            return Ok((Length::Invalid, i + 1));
        }
        i += 1;
        if i >= self.len {
            return Ok((Length::Truncated, i));
        }
        if self.byte(i)? != b'\n' {
            return Ok((Length::Invalid, i + 1));
        }
        let too_large = value > i32::MAX as u64;
        let length = match (neg, too_large) {
            (true, _) if too_large || value != 1 => Length::Negative,
            (true, _) => Length::Null,
            (false, true) => Length::TooLarge,
            (false, false) => Length::Value(value as u32),
        };
        Ok((length, i + 1))
    }
}

/// One byte as tcpdump's `fn_print_char` shows it: `M-` for the high bit, `^` for control
/// characters (DEL as `^?`).
fn print_char(out: &mut String, c: u8) {
    let mut c = c;
    if !c.is_ascii() {
        c &= 0x7f;
        out.push_str("M-");
    }
    if !(0x20..0x7f).contains(&c) {
        c ^= 0x40;
        out.push('^');
    }
    out.push(char::from(c));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The text and whether it jumped, for `data` of a payload `len` long.
    fn show_cut(data: &[u8], len: usize) -> (String, bool) {
        let jumped = Cell::new(false);
        let p = Payload {
            names: false,
            data,
            len,
            sport: 40000,
            dport: 6379,
            verbose: 0,
            jumped: &jumped,
        };
        let mut out = String::new();
        resp(&mut out, &p);
        (out, jumped.get())
    }

    fn show(data: &[u8]) -> String {
        show_cut(data, data.len()).0
    }

    #[test]
    fn commands_and_replies() {
        assert_eq!(show(b"*1\r\n$4\r\nPING\r\n"), r#": RESP "PING""#);
        assert_eq!(
            show(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"),
            r#": RESP "SET" "k" "v""#
        );
        assert_eq!(show(b"+OK\r\n"), r#": RESP "OK""#);
        assert_eq!(show(b":1000\r\n"), r#": RESP "1000""#);
        assert_eq!(show(b"-ERR no\r\n"), r#": RESP "ERR no""#);
        assert_eq!(show(b"$-1\r\n"), ": RESP null");
        assert_eq!(show(b"*-1\r\n"), ": RESP null");
        assert_eq!(show(b"*0\r\n"), ": RESP empty");
        assert_eq!(show(b"$0\r\n\r\n"), ": RESP empty");
        assert_eq!(show(b"PING\r\nPING\n"), r#": RESP "PING" "PING""#);
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            show(b"$-2\r\n+a\r\n"),
            r#": RESP length negative and not -1 "a""#
        );
        assert_eq!(show(b"*2147483648\r\n"), ": RESP length too large");
        assert_eq!(show(b"$2147483647\r\nab\r\n"), ": RESP [|resp]");
        assert_eq!(show(b"$x\r\n"), ": RESP invalid [|resp]");
        assert_eq!(show(b"PING\r\n\r\n"), r#": RESP "PING""#);
        assert_eq!(show(b"\x01\x7f\xff\n"), r#": RESP "^A^?M-^?""#);
    }

    #[test]
    fn cuts_and_hostile_input() {
        // Cut inside an inline command: a read past the capture.
        assert_eq!(show_cut(b"PI", 6), (": RESP [|resp]".to_owned(), true));
        // Cut before a bulk string's bytes: a length check.
        assert_eq!(
            show_cut(b"$4\r\nPI", 10),
            (": RESP [|resp]".to_owned(), false)
        );
        // Deep nesting neither recurses nor loops forever.
        let deep = b"*1\r\n".repeat(100_000);
        assert_eq!(show(&deep), ": RESP [|resp]");
        let wide = b"*2147483647\r\n:1\r\n".to_vec();
        assert_eq!(show(&wide), r#": RESP "1" [|resp]"#);
        for cut in 0..40 {
            let m = b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n+OK\r\n";
            let _ = show_cut(&m[..cut.min(m.len())], m.len());
        }
    }
}
