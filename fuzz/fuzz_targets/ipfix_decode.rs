//! `zcrx_flowcache::ipfix::decode`: an IPFIX file (messages back to back, RFC 5655) read by
//! one decoder that keeps templates across messages, the names templates' variable-length
//! strings included: never a panic, at most `MAX_RECORDS_PER_MESSAGE` records a message,
//! one `ZcrxElements` per record, and no string longer than the U+FFFD of each byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::ipfix::decode::{messages, Decoder, MAX_RECORDS_PER_MESSAGE};

fuzz_target!(|data: &[u8]| {
    let mut dec = Decoder::new();
    for m in messages(data) {
        let Ok(m) = m else { break };
        let Ok((msg, zcrx)) = dec.message_with_zcrx(m) else {
            continue;
        };
        assert_eq!(msg.flows.len(), zcrx.len());
        assert!(msg.flows.len() <= MAX_RECORDS_PER_MESSAGE);
        for n in zcrx.iter().filter_map(|z| z.names.as_ref()) {
            for s in [
                &n.server_name,
                &n.alpn,
                &n.ja4,
                &n.dns_query_name,
                &n.http_host,
            ] {
                assert!(s.len() <= 3 * m.len(), "{}", s.len());
            }
        }
    }
});
