//! `zcrx_flowcache::names` TLS: ClientHello and ServerHello from records or a bare handshake
//! message. Never a panic; a JA4 always has its 36-character shape; a ClientHello parses the
//! same whatever record sizes carry it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::names::{ClientHello, HelloTransport, ServerHello, PAYLOAD_BUDGET};
use zcrx_flowcache::testdata::names::records;

/// JA4's shape: 10 characters (the ALPN pair may be any printable ASCII, `_` included), then
/// `_`, 12 hex digits, `_`, 12 hex digits.
fn check_ja4(ja4: &str) {
    let b = ja4.as_bytes();
    assert_eq!(b.len(), 36, "{ja4}");
    assert!(b[10] == b'_' && b[23] == b'_', "{ja4}");
    let hex = |r: &[u8]| r.iter().all(|c| c.is_ascii_hexdigit());
    assert!(hex(&b[11..23]) && hex(&b[24..]), "{ja4}");
    assert!(b[..10].iter().all(|c| (0x20..0x7f).contains(c)), "{ja4}");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = ClientHello::parse_records(data) {
        check_ja4(&h.ja4);
        assert!(!h.versions.is_empty());
    }
    let _ = ServerHello::parse_records(data);
    let _ = ServerHello::parse(data);
    if let Ok(h) = ClientHello::parse(data, HelloTransport::Tcp) {
        check_ja4(&h.ja4);
        assert!(h.ja4.starts_with('t'));
        let n = 4 + (usize::from(data[1]) << 16 | usize::from(data[2]) << 8 | usize::from(data[3]));
        if n <= PAYLOAD_BUDGET {
            let chunk = 1 + usize::from(data.last().copied().unwrap_or(0)) * 16;
            let again = ClientHello::parse_records(&records(&data[..n], chunk));
            assert_eq!(again.as_ref(), Ok(&h), "chunk {chunk}");
        }
        let q = ClientHello::parse(data, HelloTransport::Quic).expect("the same bytes");
        assert_eq!(q.ja4[1..], h.ja4[1..]);
    }
});
