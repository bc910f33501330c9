//! The text protocols tcpdump shows by their first line (tcpdump's `txtproto_print`): HTTP,
//! RTSP and SIP when a request or response line starts the payload, FTP and SMTP always;
//! with `-v`, every line while they are printable text.

use std::fmt::Write as _;

use super::Payload;

/// HTTP's request methods, WebDAV's included.
const HTTP: &[&str] = &[
    "GET",
    "PUT",
    "COPY",
    "HEAD",
    "LOCK",
    "MOVE",
    "POLL",
    "POST",
    "BCOPY",
    "BMOVE",
    "MKCOL",
    "TRACE",
    "LABEL",
    "MERGE",
    "DELETE",
    "SEARCH",
    "UNLOCK",
    "REPORT",
    "UPDATE",
    "NOTIFY",
    "BDELETE",
    "CONNECT",
    "OPTIONS",
    "CHECKIN",
    "PROPFIND",
    "CHECKOUT",
    "CCM_POST",
    "SUBSCRIBE",
    "PROPPATCH",
    "BPROPFIND",
    "BPROPPATCH",
    "UNCHECKOUT",
    "MKACTIVITY",
    "MKWORKSPACE",
    "UNSUBSCRIBE",
    "RPC_CONNECT",
    "VERSION-CONTROL",
    "BASELINE-CONTROL",
];

/// RTSP's methods.
const RTSP: &[&str] = &[
    "DESCRIBE",
    "ANNOUNCE",
    "GET_PARAMETER",
    "OPTIONS",
    "PAUSE",
    "PLAY",
    "RECORD",
    "REDIRECT",
    "SETUP",
    "SET_PARAMETER",
    "TEARDOWN",
];

/// SIP's methods.
const SIP: &[&str] = &[
    "ACK",
    "BYE",
    "CANCEL",
    "DO",
    "INFO",
    "INVITE",
    "MESSAGE",
    "NOTIFY",
    "OPTIONS",
    "PRACK",
    "QAUTH",
    "REFER",
    "REGISTER",
    "SPRACK",
    "SUBSCRIBE",
    "UPDATE",
    "PUBLISH",
];

/// The longest token tcpdump reads as a method or a status code.
const MAX_TOKEN: usize = 128;

/// HTTP over TCP (after `: `).
pub fn http(out: &mut String, p: &Payload<'_>) {
    out.push_str(": ");
    text(out, p, "HTTP", Some(HTTP));
}

/// RTSP over TCP (after `: `).
pub fn rtsp(out: &mut String, p: &Payload<'_>) {
    out.push_str(": ");
    text(out, p, "RTSP", Some(RTSP));
}

/// FTP's control connection (after `: `).
pub fn ftp(out: &mut String, p: &Payload<'_>) {
    out.push_str(": ");
    text(out, p, "FTP", None);
}

/// SMTP (after `: `).
pub fn smtp(out: &mut String, p: &Payload<'_>) {
    out.push_str(": ");
    text(out, p, "SMTP", None);
}

/// SIP over UDP.
pub fn sip(out: &mut String, p: &Payload<'_>) {
    text(out, p, "SIP", Some(SIP));
}

/// A byte of the payload, `None` past the capture (or past its length).
fn at(p: &Payload<'_>, i: usize) -> Option<u8> {
    (i < p.len).then(|| p.data.get(i).copied()).flatten()
}

/// tcpdump's `txtproto_print`: the protocol's name, then with `methods` only when the first
/// token is one of them or the first or second token is a 3-digit status, its first line (or
/// with `-v` the length and every printable line).
fn text(out: &mut String, p: &Payload<'_>, name: &str, methods: Option<&[&str]>) {
    let shown = match methods {
        None => true,
        Some(methods) => {
            let mut shown = false;
            let mut tok = token(p, 0);
            if let Some((_, t)) = &tok {
                shown = methods.iter().any(|m| m.eq_ignore_ascii_case(t));
            }
            // The status is the second token (HTTP/1.1 200 OK).
            tok = tok.and_then(|(next, _)| token(p, next));
            if let Some((_, t)) = tok {
                let b = t.as_bytes();
                shown |= b.len() == 3 && b.iter().all(u8::is_ascii_digit);
            }
            shown
        }
    };
    out.push_str(name);
    if !shown {
        return;
    }
    let cut = if p.verbose > 0 {
        let _ = write!(out, ", length: {}", p.len);
        let mut idx = 0;
        loop {
            if idx >= p.len {
                break false;
            }
            match line(out, "\n\t", p, idx) {
                Line::Next(next) => idx = next,
                Line::Stop => break false,
                Line::Cut => break true,
                Line::Jump => {
                    p.jumped.set(true);
                    break true;
                }
            }
        }
    } else {
        match line(out, ": ", p, 0) {
            Line::Cut => true,
            Line::Jump => {
                p.jumped.set(true);
                true
            }
            _ => false,
        }
    };
    if cut {
        let _ = write!(out, " [|{}]", name.to_ascii_lowercase());
    }
}

/// A token at `idx` (up to a space, tab or line end; printable ASCII) and where the next one
/// starts, as tcpdump's `fetch_token`.
fn token<'a>(p: &Payload<'a>, idx: usize) -> Option<(usize, &'a str)> {
    let mut i = idx;
    while i < p.len {
        let c = *p.data.get(i)?;
        if !c.is_ascii() {
            return None;
        }
        if matches!(c, b' ' | b'\t' | b'\r' | b'\n') {
            break;
        }
        if !c.is_ascii_graphic() || i - idx + 2 > MAX_TOKEN + 1 {
            return None;
        }
        i += 1;
    }
    if i == idx {
        return None;
    }
    let tok = std::str::from_utf8(p.data.get(idx..i)?).ok()?;
    // The spaces after it, to the next token or the line's end.
    while i < p.len && p.data.get(i) == Some(&b' ') {
        i += 1;
    }
    Some((i, tok))
}

/// What printing a line gave.
enum Line {
    /// The line was printed; the next starts here.
    Next(usize),
    /// Not a text line (binary data, a lone CR), or the end of the payload: nothing more.
    Stop,
    /// Printable to the payload's end with no line end: printed, then marked as cut.
    Cut,
    /// The capture ended inside it: nothing of it printed (tcpdump's read jumps out).
    Jump,
}

/// tcpdump's `print_txt_line`: the line at `idx` after `prefix`, without its LF or CR-LF.
fn line(out: &mut String, prefix: &str, p: &Payload<'_>, idx: usize) -> Line {
    let start = idx;
    let mut i = idx;
    let (len, next) = loop {
        if i >= p.len {
            // Printable to the end but no line end: shown, and marked as cut.
            print_span(out, prefix, p, start, i);
            return Line::Cut;
        }
        let Some(c) = at(p, i) else {
            return Line::Jump;
        };
        match c {
            b'\n' => break (i - start, i + 1),
            b'\r' => match at(p, i + 1) {
                _ if i + 1 >= p.len => return Line::Stop,
                Some(b'\n') => break (i - start, i + 2),
                Some(_) => return Line::Stop,
                None => return Line::Jump,
            },
            c if c.is_ascii_graphic() || c == b' ' || c == b'\t' => i += 1,
            _ => return Line::Stop,
        }
    };
    print_span(out, prefix, p, start, start + len);
    Line::Next(next)
}

fn print_span(out: &mut String, prefix: &str, p: &Payload<'_>, from: usize, to: usize) {
    out.push_str(prefix);
    if let Some(b) = p.data.get(from..to) {
        // Printable ASCII and tabs only (checked by the caller).
        out.extend(b.iter().map(|&c| c as char));
    }
}
