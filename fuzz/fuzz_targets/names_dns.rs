//! `zcrx_flowcache::names` DNS over UDP and TCP: never a panic or a hang (compression
//! pointers only point back), and a name is never longer than the 255 octets it may take on the wire.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::names::DnsMessage;

fuzz_target!(|data: &[u8]| {
    for m in [DnsMessage::parse(data), DnsMessage::parse_tcp(data)]
        .into_iter()
        .flatten()
    {
        if let Some(q) = m.question {
            // Each wire octet becomes at most one byte of the name (a length octet a dot).
            assert!(q.name.len() <= 255, "{}", q.name.len());
        }
    }
});
