//! SSH: the version line that opens each side of a connection (RFC 4253 §4.2), as tcpdump
//! shows it; nothing for the binary packets after it.

use super::Payload;

/// `: SSH: SSH-2.0-...` when the payload is a whole version line.
pub fn ssh(out: &mut String, p: &Payload<'_>) {
    let byte = |i: usize| p.data.get(i).copied();
    for (i, want) in b"SSH-".iter().enumerate() {
        match byte(i) {
            Some(c) if c == *want => {}
            Some(_) => return,
            None => return cut(out, p),
        }
    }
    let mut idx = 4;
    while idx < p.len {
        let Some(c) = byte(idx) else {
            return cut(out, p);
        };
        match c {
            b'\n' => return line(out, p, idx),
            b'\r' if idx + 1 >= p.len => return,
            b'\r' => match byte(idx + 1) {
                Some(b'\n') => return line(out, p, idx),
                Some(_) => return,
                None => return cut(out, p),
            },
            c if c.is_ascii_graphic() || c == b' ' => idx += 1,
            _ => return,
        }
    }
}

fn line(out: &mut String, p: &Payload<'_>, end: usize) {
    out.push_str(": SSH: ");
    // Printable ASCII (checked by the caller).
    out.extend(p.data.iter().take(end).map(|&c| c as char));
}

/// A read past the capture: tcpdump's mark, and its jump out.
fn cut(out: &mut String, p: &Payload<'_>) {
    p.jumped.set(true);
    out.push_str(" [|ssh]");
}
