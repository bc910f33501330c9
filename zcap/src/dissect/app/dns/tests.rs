//! The DNS printers over crafted messages.

use super::super::{Payload, Printer};
use super::ctx::Ctx;
use super::{mdns, tables, tcp, udp};

fn line(f: Printer, msg: &[u8], len: usize, verbose: u8) -> String {
    let jumped = std::cell::Cell::new(false);
    let p = Payload {
        names: false,
        jumped: &jumped,
        data: msg,
        len,
        sport: 1024,
        dport: 53,
        verbose,
    };
    let mut out = String::new();
    f(&mut out, &p);
    out
}

/// The line for a whole message.
fn whole(f: Printer, msg: &[u8], verbose: u8) -> String {
    line(f, msg, msg.len(), verbose)
}

fn name(n: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in n.split('.').filter(|l| !l.is_empty()) {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

fn be(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// Header, one question for `www.example.com` of type `qtype`, then `rest`.
fn message(id: u16, flags: u16, counts: [u16; 4], qtype: u16, rest: &[u8]) -> Vec<u8> {
    let mut m = be(&[id, flags, counts[0], counts[1], counts[2], counts[3]]);
    m.extend(name("www.example.com"));
    m.extend(be(&[qtype, 1]));
    m.extend_from_slice(rest);
    m
}

/// A record named by a pointer to the question's name.
fn answer(typ: u16, class: u16, ttl: u32, data: &[u8]) -> Vec<u8> {
    let mut r = be(&[0xc00c, typ, class]);
    r.extend(ttl.to_be_bytes());
    r.extend(be(&[data.len() as u16]));
    r.extend_from_slice(data);
    r
}

#[test]
fn queries_and_their_flags() {
    let m = message(4660, 0x0100, [1, 0, 0, 0], 1, &[]);
    assert_eq!(whole(udp, &m, 0), "4660+ A? www.example.com. (33)");
    let m = message(7, 0x0130, [1, 0, 0, 0], 28, &[]);
    assert_eq!(whole(udp, &m, 0), "7+% AAAA? www.example.com. (33)");
    let m = message(9, 0x2847, [1, 2, 0, 0], 65, &[]);
    assert_eq!(
        whole(udp, &m, 0),
        "9 update [b2&3=0x2847] [2a] Type65? www.example.com. (33)"
    );
    let m = message(9, 0x0800, [1, 1, 0, 0], 255, &[]);
    assert_eq!(whole(udp, &m, 0), "9 inv_q [1q] ANY? www.example.com. (33)");
}

#[test]
fn responses_with_answers_and_verbosity() {
    let mut rest = answer(1, 1, 3600, &[93, 184, 216, 34]);
    rest.extend(answer(5, 1, 90061, &[1, b'x', 0xc0, 0x10]));
    let m = message(2, 0x8580, [1, 2, 0, 0], 1, &rest);
    assert_eq!(
        whole(udp, &m, 0),
        "2* 2/0/0 A 93.184.216.34, CNAME x.example.com. (65)"
    );
    assert_eq!(
        whole(udp, &m, 1),
        "2* 2/0/0 www.example.com. A 93.184.216.34, www.example.com. CNAME x.example.com. (65)"
    );
    assert_eq!(
        whole(udp, &m, 3),
        "2* q: A? www.example.com. 2/0/0 www.example.com. [1h] A 93.184.216.34, \
         www.example.com. [1d1h1m1s] CNAME x.example.com. (65)"
    );
    let m = message(5, 0x8103, [1, 0, 0, 0], 1, &[]);
    assert_eq!(whole(udp, &m, 0), "5 NXDomain- 0/0/0 (33)");
    let m = message(5, 0x8382, [1, 0, 0, 0], 1, &[]);
    assert_eq!(whole(udp, &m, 0), "5 ServFail| 0/0/0 (33)");
}

#[test]
fn edns_and_its_options() {
    let mut opts = be(&[10, 8]);
    opts.extend([1, 2, 3, 4, 5, 6, 7, 8]);
    opts.extend(be(&[8, 7, 1, 0x1800]));
    opts.extend([192, 0, 2]);
    opts.extend(be(&[11, 2, 1200]));
    let mut opt = vec![0];
    opt.extend(be(&[41, 1232, 0x0100, 0x8000, opts.len() as u16]));
    opt.extend(&opts);
    let m = message(64161, 0x0100, [1, 0, 0, 1], 99, &opt);
    assert_eq!(whole(udp, &m, 0), "64161+ [1au] SPF? www.example.com. (73)");
    assert_eq!(
        whole(udp, &m, 2),
        "64161+ [1au] SPF? www.example.com. ar: . OPT UDPsize=1232 DO \
         [COOKIE 0102030405060708,ECS 192.0.2.0/24/0,KEEPALIVE 120.0 sec] (73)"
    );
    // The extended rcode's upper bits come from the OPT record.
    let m = message(3, 0x8180, [1, 0, 0, 1], 1, &opt);
    assert!(whole(udp, &m, 0).starts_with("3 BadVers 0/0/1"));
}

#[test]
fn mdns_bits() {
    let mut m = be(&[0, 0, 1, 0, 0, 0]);
    m.extend(name("printer.local"));
    m.extend(be(&[1, 0x8001]));
    assert_eq!(whole(mdns, &m, 0), "0 A (QU)? printer.local. (31)");
    assert_eq!(whole(udp, &m, 0), "0 A (Class 32769)? printer.local. (31)");
    let mut m = be(&[0, 0x8400, 0, 1, 0, 0]);
    m.extend(name("printer.local"));
    m.extend(be(&[1, 0x8001, 0, 120, 4]));
    m.extend([192, 168, 1, 9]);
    assert_eq!(
        whole(mdns, &m, 1),
        "0*- [0q] 1/0/0 printer.local. (Cache flush) A 192.168.1.9 (41)"
    );
}

#[test]
fn over_tcp() {
    let m = message(1, 0x0100, [1, 0, 0, 0], 1, &[]);
    let framed = [&be(&[m.len() as u16])[..], &m].concat();
    assert_eq!(whole(tcp, &framed, 0), " 1+ A? www.example.com. (33)");
    assert_eq!(
        whole(tcp, &[0, 9, 1], 0),
        " [prefix length(9) != length(1)] (invalid)"
    );
    assert_eq!(
        whole(tcp, &[0], 0),
        " [DNS over TCP: length 1 < 2] (invalid)"
    );
    assert_eq!(line(tcp, &[0], 40, 0), " [|domain]");
    assert_eq!(
        whole(tcp, &[0, 3, 1, 2, 3], 0),
        " domain [length 3 < 12] (invalid)"
    );
    assert_eq!(line(tcp, &[0, 20, 1], 22, 0), "  [|domain]");
}

#[test]
fn malformed_names() {
    // A pointer to itself, a forward one, a reserved label type, an unknown EDNS label.
    for (qname, shown) in [
        (&[0xc0, 12][..], "1+ A? <BAD PTR> [|domain]"),
        (&[0xc0, 40], "1+ A? <BAD PTR> [|domain]"),
        (&[1, b'a', 0x80, 0], "1+ [|domain]"),
        (
            &[1, b'a', 0x41, 12, 0xab, 0xcd, 0],
            "1+ A? a.\\[xabc/12]. (23)",
        ),
        (&[3, 1, 0x7f, 0xe9, 0], "1+ A? ^A^?M-i. (21)"),
    ] {
        let mut m = be(&[1, 0x0100, 1, 0, 0, 0]);
        m.extend_from_slice(qname);
        m.extend(be(&[1, 1]));
        assert_eq!(whole(udp, &m, 0), shown);
    }
    let long = vec!["a".repeat(60); 5].join(".");
    let mut m = be(&[1, 0x0100, 1, 0, 0, 0]);
    m.extend(name(&long));
    m.extend(be(&[1, 1]));
    let l = whole(udp, &m, 0);
    assert!(l.ends_with("a<DOMAIN NAME TOO LONG> (322)"), "{l}");
    assert_eq!(l.matches('a').count(), 255 - 4);
    assert_eq!(
        whole(udp, &[1, 2, 3], 0),
        "domain [length 3 < 12] (invalid)"
    );
}

#[test]
fn pointer_chains_end_and_the_step_budget_holds() {
    // Each pointer points at the one before it: a long walk, backwards only.
    let mut m = be(&[1, 0x0100, 1, 0, 0, 0]);
    m.extend([1, b'z', 0]);
    for k in 0..2000u16 {
        let at = if k == 0 { 12 } else { 15 + 2 * (k - 1) };
        m.extend(be(&[0xc000 | at]));
    }
    let q = m.len() - 2;
    m.extend(be(&[1, 1]));
    let mut out = String::new();
    let mut c = Ctx {
        out: &mut out,
        m: &m,
        verbose: 0,
        mdns: false,
        steps: 1 << 22,
    };
    assert_eq!(c.fqdn(q, 0), Ok(q + 2));
    assert_eq!(out, "z.");
    let mut out = String::new();
    let mut c = Ctx {
        out: &mut out,
        m: &m,
        verbose: 0,
        mdns: false,
        steps: 100,
    };
    assert_eq!(c.fqdn(q, 0), Err(super::Stop::Trunc));
}

#[test]
fn cut_and_garbled_messages_never_panic() {
    let mut rest = answer(15, 1, 60, &[0, 10, 2, b'm', b'x', 0xc0, 0x0c]);
    rest.extend(answer(16, 1, 60, b"\x03abc\x00"));
    rest.extend(answer(33, 1, 60, &[0, 1, 0, 2, 0, 80, 0xc0, 0x10]));
    rest.extend(answer(
        28,
        1,
        60,
        &[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ));
    rest.extend(answer(6, 1, 60, &[0xc0, 0x0c, 0xc0, 0x10, 0, 0, 0, 1]));
    rest.extend(answer(41, 512, 0, &[0, 13, 0, 2, 0x41, 0]));
    let m = message(1, 0x8180, [1, 6, 0, 0], 255, &rest);
    let mut seed = 0x1234_5678u32;
    for cut in 0..=m.len() {
        for v in 0..4 {
            for f in [udp, mdns, tcp] {
                let l = line(f, &m[..cut], m.len(), v);
                assert!(
                    cut == m.len() || l.ends_with(']') || l.ends_with(')'),
                    "{l}"
                );
                // The same bytes with one flipped.
                let mut g = m.clone();
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let at = (seed >> 8) as usize % g.len();
                g[at] ^= (seed >> 24) as u8 | 1;
                let _ = line(f, &g[..cut], m.len(), v);
            }
        }
    }
}

#[test]
fn ipv6_and_time_spans_as_tcpdump_writes_them() {
    for (a, s) in [
        ([0u16, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ([0, 0, 0, 0, 0, 0, 0, 0], "::"),
        ([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"),
        ([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304], "::ffff:1.2.3.4"),
        ([0, 0, 0, 0, 0, 0, 0x102, 0x304], "::1.2.3.4"),
        ([0xfe80, 0, 0, 1, 0, 0, 0, 0], "fe80:0:0:1::"),
        ([1, 0, 2, 0, 3, 0, 4, 0], "1:0:2:0:3:0:4:0"),
    ] {
        let b: Vec<u8> = be(&a);
        let mut out = String::new();
        tables::ipv6(&mut out, b.try_into().unwrap());
        assert_eq!(out, s);
    }
    for (secs, s) in [
        (0, "0s"),
        (59, "59s"),
        (3600, "1h"),
        (31_536_000 + 8 * 86_400 + 1, "1y1w1d1s"),
    ] {
        let mut out = String::new();
        tables::relts(&mut out, secs);
        assert_eq!(out, s);
    }
}
