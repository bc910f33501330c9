//! The crafted DNS messages.

use super::{header, msg, name, opt, ptr, q, rr};

const DNS: (u16, u16) = (33333, 53);
const BACK: (u16, u16) = (53, 33333);
const MDNS: (u16, u16) = (5353, 5353);

/// Queries of every common type and class, with the header's unusual bits.
fn queries() -> Vec<Vec<u8>> {
    let www = name("www.example.com");
    let mut v: Vec<Vec<u8>> = [
        1, 28, 15, 16, 12, 33, 6, 5, 2, 65, 64, 255, 257, 99, 41, 4000,
    ]
    .iter()
    .map(|&t| msg(&[header(0x1234, 0x0100, [1, 0, 0, 0]), q(&www, t, 1)]))
    .collect();
    for (flags, class) in [
        (0, 3),
        (0x0110, 4),
        (0x0100, 255),
        (0x0100, 77),
        (0x0130, 1),
    ] {
        v.push(msg(&[
            header(7, flags, [1, 0, 0, 0]),
            q(&name("version.bind"), 16, class),
        ]));
    }
    // Opcodes (inverse query's own counts), odd bits, odd counts, no question, two.
    for (flags, counts) in [
        (0x0800, [0, 1, 0, 0]),
        (0x0800, [1, 2, 0, 0]),
        (0x2000, [1, 0, 0, 0]),
        (0x2800, [1, 1, 1, 0]),
        (0x7900, [1, 0, 0, 0]),
        (0x0600, [1, 0, 0, 0]),
        (0x0047, [1, 0, 0, 0]),
        (0x0100, [0, 0, 0, 0]),
    ] {
        v.push(msg(&[header(9, flags, counts), q(&www, 1, 1)]));
    }
    v.push(msg(&[
        header(10, 0x0100, [2, 0, 0, 0]),
        q(&www, 1, 1),
        q(&ptr(12), 28, 1),
    ]));
    // EDNS: [1au], options at -vv.
    v.push(msg(&[
        header(64161, 0x0100, [1, 0, 0, 1]),
        q(&name("mail.vladg.net"), 99, 1),
        opt(1232, 0, true, &[(10, &[1, 2, 3, 4, 5, 6, 7, 8])]),
    ]));
    // Other sections in a query (-vv prints them).
    v.push(msg(&[
        header(11, 0x2800, [1, 1, 1, 1]),
        q(&www, 6, 1),
        rr(&ptr(12), 1, 1, 300, &[192, 0, 2, 7]),
        rr(&ptr(12), 2, 1, 300, &name("ns1.example.com")),
        opt(4096, 0, false, &[]),
    ]));
    v
}

fn soa() -> Vec<u8> {
    let mut d = name("ns1.example.com");
    d.extend(name("hostmaster.example.com"));
    for x in [2024010101u32, 7200, 3600, 1209600, 300] {
        d.extend_from_slice(&x.to_be_bytes());
    }
    d
}

/// Responses: answers of every type tcpdump shows, error codes, flags, sections.
fn responses() -> Vec<Vec<u8>> {
    let www = name("www.example.com");
    let p = ptr(12);
    let aaaa = |a: [u8; 16]| rr(&p, 28, 1, 60, &a);
    let mut v = vec![
        msg(&[
            header(0x1234, 0x8180, [1, 2, 0, 0]),
            q(&www, 1, 1),
            rr(&p, 1, 1, 3600, &[93, 184, 216, 34]),
            rr(&p, 1, 1, 90061, &[10, 0, 0, 1]),
        ]),
        msg(&[
            header(2, 0x8580, [1, 2, 0, 0]),
            q(&www, 1, 1),
            rr(
                &p,
                5,
                1,
                60,
                &[&[3, b'c', b'd', b'n'][..], &ptr(16)].concat(),
            ),
            rr(&ptr(45), 1, 1, 60, &[1, 2, 3, 4]),
        ]),
        msg(&[
            header(3, 0x8180, [1, 5, 0, 0]),
            q(&www, 28, 1),
            aaaa([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            aaaa([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            aaaa([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]),
            aaaa([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]),
            aaaa([0xfe, 0x80, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
        ]),
        msg(&[
            header(4, 0x8180, [1, 4, 0, 0]),
            q(&www, 15, 1),
            rr(
                &p,
                15,
                1,
                60,
                &[&[0, 10][..], &name("mx1.example.com")].concat(),
            ),
            rr(
                &p,
                16,
                1,
                60,
                b"\x05hello\x0bv=spf1 -all\x00\x03\x01\x7f\xc8",
            ),
            rr(
                &p,
                33,
                1,
                60,
                &[&[0, 1, 0, 5, 0x13, 0xc4][..], &ptr(16)].concat(),
            ),
            rr(&p, 12, 1, 60, &name("host.example.net")),
        ]),
        msg(&[
            header(5, 0x8183, [1, 0, 1, 0]),
            q(&name("nope.example.com"), 1, 1),
            rr(&ptr(17), 6, 1, 900, &soa()),
        ]),
        msg(&[
            header(6, 0x8582, [1, 1, 2, 1]),
            q(&www, 2, 1),
            rr(&p, 2, 1, 60, &name("a.ns.example.com")),
            rr(&p, 2, 3, 60, &name("b.ns.example.com")),
            rr(&p, 2, 99, 60, &name("c.ns.example.com")),
            opt(1232, 1, true, &[]),
        ]),
    ];
    for flags in [
        0x8005u16, 0x8004, 0x8009, 0x800f, 0x8380, 0x81a0, 0xa180, 0x8100, 0xf980,
    ] {
        v.push(msg(&[header(8, flags, [1, 0, 0, 0]), q(&www, 1, 1)]));
    }
    // Extended rcodes: BADVERS, the table's odd Resp17 and Resp21, one past the table.
    for ext in [1u8, 2, 255] {
        for low in [0u16, 1, 5] {
            v.push(msg(&[
                header(12, 0x8180 | low, [1, 0, 0, 1]),
                q(&www, 1, 1),
                opt(512, ext, false, &[]),
            ]));
        }
    }
    v.push(other_types());
    v
}

/// Other record types: A6, URI, UNSPECA, TSIG, WKS, type 65, DNAME, a TTL of 0.
fn other_types() -> Vec<u8> {
    let www = name("www.example.com");
    let p = ptr(12);
    let mut a6 = vec![64u8];
    a6.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
    a6.extend(name("prefix.example"));
    let mut tsig = name("hmac-sha256");
    tsig.extend_from_slice(&[
        0, 0, 0x65, 0, 0, 0, 1, 0x2c, 0, 4, 1, 2, 3, 4, 0, 12, 0, 0, 0, 0,
    ]);
    msg(&[
        header(13, 0x8180, [1, 9, 0, 0]),
        q(&www, 255, 1),
        rr(&p, 38, 1, 60, &a6),
        rr(&p, 38, 1, 60, &[128, 3, b'a', b'b', b'c', 0]),
        rr(&p, 38, 1, 60, &[200]),
        rr(&p, 256, 1, 60, b"\x00\x01\x00\x02https://x/"),
        rr(&p, 104, 1, 60, b"ascii\x01"),
        rr(&p, 250, 255, 0, &tsig),
        rr(&p, 11, 1, 60, &[1, 2, 3, 4, 6, 0xff]),
        rr(&p, 65, 1, 60, &[0, 1, 0]),
        rr(&p, 39, 1, 0, &name("example.org")),
    ])
}

/// EDNS options, good and bad, in a query's and a response's OPT record.
fn edns() -> Vec<Vec<u8>> {
    let www = name("www.example.com");
    let opts: Vec<Vec<(u16, &[u8])>> = vec![
        vec![(3, b"ns1"), (8, &[0, 1, 24, 0, 192, 0, 2])],
        vec![(8, &[0, 2, 56, 0, 0x20, 1, 0xd, 0xb8, 0, 0, 0])],
        vec![(8, &[0, 1, 24, 0, 192, 0])],
        vec![(8, &[0, 3, 0, 0]), (8, &[0, 1])],
        vec![(10, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])],
        vec![(10, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), (10, &[1])],
        vec![(11, &[0, 5]), (11, &[0x04, 0xb0]), (11, &[1])],
        vec![(9, &[0, 0, 0x0e, 0x10]), (9, &[1, 2])],
        vec![(12, &[0; 20]), (12, &[])],
        vec![(14, &[0x4f, 0x66, 0, 1]), (14, &[1, 2, 3])],
        vec![(5, &[8, 13, 15, 99]), (6, &[1, 2, 4, 9]), (7, &[1, 2])],
        vec![(13, b"\x07example\x03com\x00")],
        vec![(13, &[0xc0, 0])],
        vec![
            (1, &[1, 2]),
            (2, &[0, 0, 0, 60]),
            (16, &[]),
            (17, &[5]),
            (65001, &[0xab]),
        ],
        vec![(10, &[1, 2, 3, 4, 5, 6, 7, 8]), (12, &[0; 3])],
    ];
    let mut v = Vec::new();
    for o in &opts {
        v.push(msg(&[
            header(100, 0x0120, [1, 0, 0, 1]),
            q(&www, 1, 1),
            opt(1232, 0, false, o),
        ]));
        v.push(msg(&[
            header(101, 0x8180, [1, 1, 0, 1]),
            q(&www, 1, 1),
            rr(&ptr(12), 1, 1, 60, &[1, 1, 1, 1]),
            opt(4096, 0, true, o),
        ]));
    }
    v
}

/// Malformed names: pointer loops, forward pointers, bad label types, long names, odd bytes.
fn malformed() -> Vec<Vec<u8>> {
    let long = (0..9).map(|_| "a".repeat(40)).collect::<Vec<_>>().join(".");
    let hdr = |id, flags| header(id, flags, [1, 1, 0, 0]);
    let ans = |n: Vec<u8>| rr(&n, 1, 1, 60, &[1, 2, 3, 4]);
    let www = name("www.example.com");
    vec![
        msg(&[header(200, 0x0100, [1, 0, 0, 0]), q(&ptr(12), 1, 1)]),
        msg(&[header(201, 0x0100, [1, 0, 0, 0]), q(&ptr(40), 1, 1)]),
        msg(&[hdr(202, 0x8180), q(&www, 1, 1), ans(ptr(33))]),
        msg(&[
            hdr(203, 0x8180),
            q(&www, 1, 1),
            ans([&[1, b'x'][..], &ptr(33)].concat()),
        ]),
        msg(&[
            header(204, 0x0100, [1, 0, 0, 0]),
            q(&[&[1, b'a', 0x80, 1, b'b'][..], &[0]].concat(), 1, 1),
        ]),
        msg(&[header(205, 0x0100, [1, 0, 0, 0]), q(&[0x42, 1, 2, 0], 1, 1)]),
        msg(&[
            header(206, 0x0100, [1, 0, 0, 0]),
            q(&[1, b'a', 0x41, 12, 0xab, 0xcd, 0], 1, 1),
        ]),
        msg(&[
            header(207, 0x0100, [1, 0, 0, 0]),
            q(
                &[
                    0x41, 0, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
                1,
                1,
            ),
        ]),
        msg(&[header(208, 0x0100, [1, 0, 0, 0]), q(&name(&long), 1, 1)]),
        msg(&[
            header(209, 0x0100, [1, 0, 0, 0]),
            q(&[3, 0x01, 0x7f, 0xe9, 2, b' ', b'.', 0], 1, 1),
        ]),
        msg(&[
            hdr(210, 0x8180),
            q(&www, 1, 1),
            rr(&ptr(12), 1, 1, 60, &[1, 2]),
        ]),
        msg(&[
            hdr(211, 0x8180),
            q(&www, 1, 1),
            rr(&ptr(12), 1, 1, 60, &[1, 2, 3, 4, 5, 6]),
        ]),
        msg(&[
            header(212, 0x8180, [1, 3, 0, 0]),
            q(&www, 1, 1),
            ans(ptr(12)),
        ]),
        msg(&[header(213, 0x8180, [3, 0, 0, 0]), q(&www, 1, 1)]),
        msg(&[header(214, 0x0100, [1, 0, 0, 0])]),
        vec![0, 1, 2, 3, 4],
        vec![],
        header(215, 0x8180, [0, 0, 0, 0]),
        msg(&[
            header(216, 0x8180, [1, 1, 0, 0]),
            q(&www, 1, 1),
            rr(&ptr(12), 16, 1, 60, &[9, b'a']),
        ]),
    ]
}

/// mDNS: QU and QM questions, cache-flush answers, class bits on OPT.
fn mdns() -> Vec<Vec<u8>> {
    let svc = name("_http._tcp.local");
    let host = name("printer.local");
    vec![
        msg(&[
            header(0, 0, [2, 0, 0, 0]),
            q(&svc, 12, 0x8001),
            q(&host, 1, 1),
        ]),
        msg(&[
            header(0, 0, [1, 1, 0, 0]),
            q(&svc, 255, 0x8001),
            rr(&ptr(12), 12, 1, 120, &host),
        ]),
        msg(&[
            header(0, 0x8400, [0, 4, 0, 1]),
            rr(
                &svc,
                12,
                1,
                4500,
                &[&[7][..], b"printer", &ptr(12)].concat(),
            ),
            rr(&host, 1, 0x8001, 120, &[192, 168, 1, 9]),
            rr(&host, 16, 0x8001, 4500, b"\x09txtvers=1"),
            rr(
                &host,
                33,
                0x8001,
                120,
                &[&[0, 0, 0, 0, 0, 80][..], &host].concat(),
            ),
            opt(1440, 0, false, &[(4, &[0, 1, 2, 3, 4, 5, 6, 7])]),
        ]),
        msg(&[header(0, 0, [1, 0, 0, 0]), q(&host, 28, 0x8003)]),
    ]
}

/// Every message for UDP, with the ports it is sent between.
pub fn udp_messages() -> Vec<((u16, u16), Vec<u8>)> {
    let mut v = Vec::new();
    v.extend(queries().into_iter().map(|m| (DNS, m)));
    v.extend(responses().into_iter().map(|m| (BACK, m)));
    v.extend(edns().into_iter().map(|m| (DNS, m)));
    v.extend(malformed().into_iter().map(|m| (BACK, m)));
    v.extend(mdns().into_iter().map(|m| (MDNS, m)));
    // mDNS's port with DNS's: DNS wins.
    v.extend(mdns().into_iter().take(1).map(|m| ((5353, 53), m)));
    v
}

/// Messages to cut at every offset.
pub fn cut_messages() -> Vec<Vec<u8>> {
    let mut r = responses();
    let e = edns();
    vec![
        r.swap_remove(3),
        r.swap_remove(4),
        e[1].clone(),
        e[11].clone(),
        queries().swap_remove(21),
    ]
}

/// Messages for TCP (each gets its length prefix).
pub fn tcp_messages() -> Vec<Vec<u8>> {
    let mut v = queries();
    v.truncate(3);
    v.extend(responses().into_iter().take(4));
    v.extend(edns().into_iter().take(2));
    v
}
