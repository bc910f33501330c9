//! The per-flow memory bound of `zcrx_flowcache::names`, measured by a counting allocator:
//! every byte a `FlowNames` asks the allocator for while a flow floods it (one-byte
//! ClientHello fragments out of order and retransmitted, a QUIC flood of Initials, long
//! flows past the budget) is counted, and the total stays within `FLOW_NAMES_HEAP_BOUND`;
//! half-open handshakes allocate nothing. No test harness (Cargo.toml): the process's only
//! thread is the one counted.

zcrx_ring::counting_allocator!(one_test);

use zcrx_flowcache::names::{FlowNames, FLOW_NAMES_HEAP_BOUND, PAYLOAD_BUDGET, SEGMENT_BUDGET};
use zcrx_flowcache::Direction::{Forward as F, Reverse as R};

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// A ClientHello of `len` body bytes in one TLS record (its content does not matter here:
/// it is never complete within the flood's budget).
fn hello_record(len: usize) -> Vec<u8> {
    let mut r = vec![22, 3, 1];
    r.extend(((len + 4) as u16).to_be_bytes());
    r.extend([1, 0, (len >> 8) as u8, len as u8]);
    r.extend(std::iter::repeat_n(0x33, len));
    r
}

/// Bytes the allocator was asked for while `f` ran (the process's one thread).
fn asked(f: impl FnOnce()) -> u64 {
    let before = counting::bytes();
    f();
    counting::bytes() - before
}

fn main() {
    a_flood_cannot_take_more_than_the_bound();
    println!("names_bound: 1 passed, 0 failed");
}

fn a_flood_cannot_take_more_than_the_bound() {
    counting::assert_installed();
    let stream = hello_record(3000);

    // 100 000 one-byte fragments, backwards and each sent twice, both directions.
    let mut flow = FlowNames::new();
    let flood = asked(|| {
        flow.tcp(F, 1000, SYN, &[], (50000, 443));
        flow.tcp(R, 9000, SYN | ACK, &[], (443, 50000));
        for round in 0..(100_000 / (2 * stream.len())) + 1 {
            for i in (0..stream.len()).rev() {
                for dir in [F, R] {
                    let base = if dir == F { 1001 } else { 9001 };
                    let seq = base + (i + round) as u32;
                    flow.tcp(dir, seq, ACK, &stream[i..i + 1], (50000, 443));
                }
            }
        }
    });
    eprintln!(
        "flood of one-byte fragments: {flood} bytes asked for, {} held after",
        flow.heap_bytes()
    );
    assert!(flood as usize <= 2 * PAYLOAD_BUDGET, "{flood}");
    assert!(flood as usize <= FLOW_NAMES_HEAP_BOUND);
    assert!(
        flow.is_done(),
        "{SEGMENT_BUDGET} segments a direction end the reading"
    );
    assert_eq!(flow.heap_bytes(), 0);

    // A long flow: 10 000 full segments after its names cost nothing more.
    let mut long = FlowNames::new();
    let req = b"GET /big HTTP/1.1\r\nHost: files.example\r\n\r\n";
    let first = asked(|| {
        long.tcp(F, 0, SYN, &[], (50001, 80));
        long.tcp(F, 1, ACK, req, (50001, 80));
    });
    let rest = asked(|| {
        let chunk = [0u8; 1448];
        for i in 0..10_000u32 {
            long.tcp(R, 1 + i * 1448, ACK, &chunk, (80, 50001));
            long.tcp(F, 1 + req.len() as u32, ACK, &[], (50001, 80));
        }
    });
    eprintln!("long flow: {first} bytes for its request, {rest} for 10 000 server segments");
    assert!(first as usize <= FLOW_NAMES_HEAP_BOUND);
    assert!(rest as usize <= PAYLOAD_BUDGET, "{rest}");
    assert!(long.is_done());
    assert!(long.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);

    // 10 000 half-open handshakes: no allocation at all.
    let mut flows: Vec<FlowNames> = (0..10_000).map(|_| FlowNames::new()).collect();
    let syns = asked(|| {
        for (i, f) in flows.iter_mut().enumerate() {
            f.tcp(F, i as u32, SYN, &[], (40000, 443));
        }
    });
    assert_eq!(syns, 0);

    // A hostile ClientHello: an SNI of 255 bytes that are not UTF-8, 1 850 one-byte ALPN
    // entries, in 8 segments: every name is stored, within the bound.
    let mut exts = vec![0, 0];
    exts.extend(260u16.to_be_bytes());
    exts.extend(258u16.to_be_bytes());
    exts.push(0);
    exts.extend(255u16.to_be_bytes());
    exts.extend(std::iter::repeat_n(0xff, 255));
    exts.extend([0, 16]);
    exts.extend((2 + 2 * 1850u16).to_be_bytes());
    exts.extend((2 * 1850u16).to_be_bytes());
    for _ in 0..1850 {
        exts.extend([1, 0xfe]);
    }
    let mut body = vec![3, 3];
    body.extend([0u8; 32]);
    body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    let mut msg = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
    msg.extend(&body);
    let mut rec = vec![22, 3, 1];
    rec.extend((msg.len() as u16).to_be_bytes());
    rec.extend(&msg);
    let mut hostile = FlowNames::new();
    let asked_hostile = asked(|| {
        hostile.tcp(F, 0, SYN, &[], (50003, 443));
        for (i, chunk) in rec.chunks(rec.len().div_ceil(8)).enumerate() {
            let seq = 1 + (i * rec.len().div_ceil(8)) as u32;
            hostile.tcp(F, seq, ACK, chunk, (50003, 443));
        }
    });
    let h = hostile
        .names()
        .client_hello
        .as_ref()
        .expect("the hostile hello");
    assert_eq!(h.hello.server_name.as_ref().map(String::len), Some(255));
    assert_eq!(h.hello.alpn.len(), zcrx_flowcache::names::MAX_ALPN);
    eprintln!(
        "hostile ClientHello ({} bytes): {asked_hostile} bytes asked for while read, {} held after",
        rec.len(),
        hostile.heap_bytes()
    );
    assert!(hostile.heap_bytes() <= FLOW_NAMES_HEAP_BOUND);

    // A QUIC flood: 1 000 long-header datagrams that never open (each decrypt attempt copies
    // the datagram and frees it; the first one that fails ends the reading).
    let mut q = FlowNames::new();
    let mut datagram = vec![0xc3, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0];
    datagram.extend((0x4000u16 | (1200 - 18)).to_be_bytes()); // the packet fills the datagram
    datagram.resize(1200, 0x77);
    let quic = asked(|| {
        for _ in 0..1000 {
            q.udp(F, &datagram, (50002, 443));
        }
    });
    eprintln!("QUIC flood: {quic} bytes asked for");
    assert!(quic as usize <= FLOW_NAMES_HEAP_BOUND, "{quic}");
    assert_eq!(q.heap_bytes(), 0);
}
