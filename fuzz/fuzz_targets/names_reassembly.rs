//! `zcrx_flowcache::names` reassembly. The input is a SYN's sequence number (4 bytes) and
//! segments, each [offset hi, offset lo, length] then its bytes, the offset relative to the
//! stream's start minus 1024 (so some fall before it). The stream's contiguous bytes must
//! equal a byte-array model's (later copies win, nothing before the start or past the budget,
//! at most eight segments), and the same segments through `FlowNames` keep its heap within
//! its bound, on HTTPS's port and on SMTP's (where TLS is looked for after text, STARTTLS).
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::names::{
    FlowNames, Reassembly, FLOW_NAMES_HEAP_BOUND, PAYLOAD_BUDGET, SEGMENT_BUDGET,
};
use zcrx_flowcache::Direction;

fuzz_target!(|data: &[u8]| {
    let [a, b, c, d, rest @ ..] = data else {
        return;
    };
    let mut rest: &[u8] = rest;
    let isn = u32::from_be_bytes([*a, *b, *c, *d]);
    let mut r = Reassembly::new();
    r.syn(isn);
    let mut free = Reassembly::new(); // no SYN: the start moves back
    let mut f = FlowNames::new();
    f.tcp(Direction::Forward, isn, 0x02, &[], (50000, 443));
    let mut g = FlowNames::new();
    g.tcp(Direction::Forward, isn, 0x02, &[], (50000, 25));
    let mut model: Vec<Option<u8>> = vec![None; PAYLOAD_BUDGET];
    let mut segments = 0;
    while let [hi, lo, len, tail @ ..] = rest {
        let tail: &[u8] = tail;
        let len = usize::from(*len).min(tail.len());
        let (payload, next) = tail.split_at(len);
        rest = next;
        let off = i64::from(u16::from_be_bytes([*hi, *lo])) - 1024;
        let seq = isn.wrapping_add(1).wrapping_add(off as u32);
        r.insert_tcp(seq, payload);
        free.insert_tcp(seq, payload);
        f.tcp(Direction::Forward, seq, 0x18, payload, (50000, 443));
        assert!(f.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);
        g.tcp(Direction::Forward, seq, 0x18, payload, (50000, 25));
        assert!(g.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);
        assert!(free.heap_bytes() <= PAYLOAD_BUDGET && free.contiguous().len() <= PAYLOAD_BUDGET);
        if payload.is_empty() || segments == SEGMENT_BUDGET {
            continue;
        }
        segments += 1;
        for (i, &byte) in payload.iter().enumerate() {
            let o = off + i as i64;
            if (0..PAYLOAD_BUDGET as i64).contains(&o) {
                model[o as usize] = Some(byte);
            }
        }
        let want: Vec<u8> = model.iter().map_while(|b| *b).collect();
        assert_eq!(r.contiguous(), &want[..]);
        assert_eq!(r.segments(), segments);
    }
});
