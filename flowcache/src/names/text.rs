//! Names read from the wire as text.

/// `bytes` as text: valid UTF-8 as it is, each byte of an invalid sequence as `?`, so the
/// string is never longer than the bytes it came from (the memory bound counts on it).
pub(super) fn text(bytes: &[u8]) -> String {
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
