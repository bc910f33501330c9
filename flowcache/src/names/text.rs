//! Names read from the wire as text.

/// `bytes` as text: valid UTF-8 as it is, each byte of an invalid sequence as `?`, and each
/// control character (C0, DEL, C1) as `?` too, so that a name printed to a terminal cannot
/// drive it; the string is never longer than the bytes it came from (the memory bound
/// counts on it).
pub(super) fn text(bytes: &[u8]) -> String {
    let mut out = utf8(bytes);
    if out.chars().any(char::is_control) {
        out = out
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
    }
    out
}

/// A host name read from the wire (a TLS or QUIC server name, a DNS name, an HTTP Host) as
/// [`text`], and the quoting characters no host name has (`'`, `"`, `\`, `` ` ``) as `?`
/// too: the names go on into databases and scripts that quote strings, and a collector that
/// writes them into SQL unescaped (pmacct's, see docs/zcap.md) must not be handed a quote by
/// whoever sends a ClientHello.
pub(super) fn host(bytes: &[u8]) -> String {
    let out = text(bytes);
    if out.contains(['\'', '"', '\\', '`']) {
        out.replace(['\'', '"', '\\', '`'], "?")
    } else {
        out
    }
}

/// Valid UTF-8 as it is, each byte of an invalid sequence as `?`.
fn utf8(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len());
                out.extend(std::iter::repeat_n('?', n));
                rest = &bad[n..];
            }
        }
    }
}
