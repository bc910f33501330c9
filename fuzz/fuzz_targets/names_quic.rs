//! `zcrx_flowcache::names` QUIC Initials. Byte 0 picks the mode: even, the rest is a
//! datagram (header and protection as they come); odd, the rest is a DCID length, a DCID and
//! the plaintext frames, protected here as a client would (version 2 if bit 1 is set), so
//! decryption must succeed and the frame walker and ClientHello parser see fuzzed plaintext.
//! Either way the datagram also goes through `FlowNames`, whose heap stays within its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::names::quic::{client_initial_crypto, long_header, VERSION_1, VERSION_2};
use zcrx_flowcache::names::{FlowNames, QuicError, FLOW_NAMES_HEAP_BOUND};
use zcrx_flowcache::testdata::names::protect_initial;
use zcrx_flowcache::Direction;

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    let datagram = if mode & 1 == 0 {
        let dcid = long_header(rest)
            .map(|(_, d)| d.to_vec())
            .unwrap_or_default();
        let _ = client_initial_crypto(rest, &dcid, |_, _| {});
        rest.to_vec()
    } else {
        let [n, rest @ ..] = rest else { return };
        let n = usize::from(*n % 21).min(rest.len());
        let (dcid, frames) = rest.split_at(n);
        let mut frames = frames.to_vec();
        frames.truncate(1400);
        frames.resize(frames.len().max(20), 0); // room for the header protection sample
        let version = if mode & 2 == 0 { VERSION_1 } else { VERSION_2 };
        let pkt = protect_initial(version, dcid, u16::from(*mode), &frames);
        let mut total = 0;
        match client_initial_crypto(&pkt, dcid, |_, d| total += d.len()) {
            Ok(v) => assert_eq!(v, version),
            Err(QuicError::Frame(_)) => {}
            Err(e) => panic!("a protected Initial did not open: {e}"),
        }
        assert!(total <= frames.len());
        pkt
    };
    let mut f = FlowNames::new();
    f.udp(Direction::Forward, &datagram, (50000, 443));
    f.udp(Direction::Forward, &datagram, (50000, 443));
    assert!(f.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);
});
