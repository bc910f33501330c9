//! DHCPv6 against tcpdump: the usual exchange, relayed messages, odd options and names.

use super::{ip6, same_as_tcpdump, udp, with_cuts, V6A, V6B};
use zcrx_ring::lab::Need;

/// A DHCPv6 option: code, length, body.
fn opt6(code: u16, body: &[u8]) -> Vec<u8> {
    [
        &code.to_be_bytes()[..],
        &(body.len() as u16).to_be_bytes(),
        body,
    ]
    .concat()
}

/// A DHCPv6 message: type, transaction ID, options.
fn dhcp6(t: u8, opts: &[Vec<u8>]) -> Vec<u8> {
    [vec![t, 0x12, 0x34, 0x56], opts.concat()].concat()
}

/// DHCPv6 messages with odd, unknown, cut and overlong options and names.
fn odd_dhcp6(llt: &[u8]) -> [Vec<u8>; 5] {
    let odd = dhcp6(
        99,
        &[
            opt6(8, &[0, 1, 2]),
            opt6(7, &[1, 2]),
            opt6(13, &[1, 0]),
            opt6(13, &[0, 42]),
            opt6(13, &[0]),
            opt6(1, &[0, 9, 1]),
            opt6(1, &[0, 1, 0]),
            opt6(1, &[0]),
            opt6(2, &[0, 2, 1]),
            opt6(2, &[0, 3, 0]),
            opt6(200, &[1, 2, 3]),
            opt6(5, &[0; 10]),
            opt6(6, &[0]),
            opt6(11, &[4, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            opt6(11, &[2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            opt6(64, b"\x09toolong"),
            opt6(44, &[&[1][..], &V6A, &opt6(1, &[0, 9])].concat()),
            opt6(45, &opt6(46, &[0, 0, 0, 1])),
            opt6(47, &[&V6B[..], &[1, 2, 3, 4]].concat()),
            opt6(48, &V6A),
            opt6(24, b"\x03abc\xc0\x02"),
        ],
    );
    let names = dhcp6(
        4,
        &[
            opt6(21, b"\x41\x10\xab\xcd\x00\x41\x0c\xab\xcd\x00\x41\x00"),
            opt6(56, &opt6(3, b"\x03ntp")),
            opt6(23, &[1; 20]),
            opt6(24, b"\x03abc\xc0\x00"),
            opt6(23, &V6A),
            opt6(23, &embedded_v4()),
            opt6(24, b"\x03abc\x42"),
        ],
    );
    let bad_label = dhcp6(6, &[opt6(24, b"\x03abc\x80"), opt6(14, &[])]);
    let overlong = [dhcp6(11, &[llt.to_vec()]), vec![0, 8, 0, 30, 1]].concat();
    let short_opt = [dhcp6(5, &[llt.to_vec()]), vec![0, 8, 0]].concat();
    [odd, names, bad_label, overlong, short_opt]
}

/// A DHCPv6 REPLY with the options a reply carries and many rarer ones.
fn dhcp6_reply(llt: &[u8], ll: &[u8]) -> Vec<u8> {
    let prefix = opt6(
        26,
        &[&[0, 0, 0x0e, 0x10, 0, 0, 0x1c, 0x20, 56][..], &V6A].concat(),
    );
    let ia_pd = opt6(
        25,
        &[&[0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 2, 0][..], &prefix].concat(),
    );
    let delayed = opt6(
        11,
        &[
            &[2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 7][..],
            b"realm",
            &[0xab; 4],
            &[0xcd; 16],
        ]
        .concat(),
    );
    let reconf = opt6(
        11,
        &[&[3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9, 2][..], &[0xee; 16]].concat(),
    );
    dhcp6(
        7,
        &[
            llt.to_vec(),
            ll.to_vec(),
            ia_pd,
            opt6(13, &[0, 0]),
            opt6(31, &V6A),
            opt6(32, &[0, 0, 0x0e, 0x10]),
            opt6(64, b"\x04aftr\x07example\x00"),
            opt6(41, b"EST5EDT,M3.2.0,M11.1.0"),
            delayed,
            reconf,
            opt6(19, &[5]),
            opt6(19, &[11]),
            opt6(19, &[3]),
            opt6(20, &[]),
            opt6(
                37,
                &[0, 0, 0x7f, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            ),
            opt6(18, b"eth0"),
            opt6(38, b"subscriber-000042"),
            opt6(4, &[0, 0, 0, 5]),
            opt6(46, &[0, 0, 0, 9]),
            opt6(112, b"https://mud.example/x"),
        ],
    )
}

/// A relay-forward carrying `solicit`, and a relay-reply carrying `reply` cut short.
fn relayed(solicit: &[u8], reply: &[u8]) -> [Vec<u8>; 2] {
    let relay = [
        &[12u8, 1][..],
        &V6A,
        &V6B,
        &opt6(18, b"ge-0/0/1"),
        &opt6(9, solicit),
    ]
    .concat();
    let relay_reply = [&[13u8, 0][..], &V6A, &V6B, &opt6(9, &reply[..20])].concat();
    [relay, relay_reply]
}

pub(super) fn dhcp6_frames() -> Vec<Vec<u8>> {
    let llt = opt6(
        1,
        &[
            0, 1, 0, 1, 0x2c, 0x3b, 0x4a, 0x59, 2, 0x42, 0xac, 0x11, 0, 2,
        ],
    );
    let ll = opt6(2, &[0, 3, 0, 1, 2, 0, 0, 0, 0, 1]);
    let en = opt6(2, &[0, 2, 0, 0, 0x7f, 0xff, 1, 2, 3, 4, 5, 6]);
    let elapsed = opt6(8, &[0, 100]);
    let oro = opt6(6, &[0, 23, 0, 24, 0, 56, 0, 17, 0, 99]);
    let addr = [&V6B[..], &[0, 0, 0x0e, 0x10, 0, 0, 0x1c, 0x20]].concat();
    let status_ok = opt6(13, &[0, 0, b'o', b'k']);
    let ia_addr = opt6(5, &[&addr[..], &status_ok].concat());
    let ia_na = opt6(
        3,
        &[&[0, 0, 0, 1, 0, 0, 0, 60, 0, 0, 0, 90][..], &ia_addr].concat(),
    );
    let names = opt6(24, b"\x07example\x03com\x00\x04corp\x07example\x00");
    let ntp_srv = opt6(
        56,
        &[
            opt6(1, &V6A),
            opt6(3, b"\x03ntp\x07example\x00"),
            opt6(9, &[1, 2]),
            opt6(2, &[1, 2, 3]),
        ]
        .concat(),
    );
    let solicit = dhcp6(
        1,
        &[
            llt.clone(),
            elapsed.clone(),
            oro.clone(),
            opt6(3, &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
            opt6(14, &[]),
            opt6(39, b"\x00\x04host"),
            opt6(16, &[0, 0, 0x7f, 0xff, 0, 4, b'z', b'c', b'r', b'x']),
        ],
    );
    let advertise = dhcp6(
        2,
        &[
            ll.clone(),
            llt.clone(),
            ia_na.clone(),
            opt6(7, &[255]),
            opt6(23, &[V6A, V6B].concat()),
            names,
            ntp_srv,
        ],
    );
    let request = dhcp6(3, &[llt.clone(), en, ia_na, oro, elapsed]);
    let reply = dhcp6_reply(&llt, &ll);
    let [relay, relay_reply] = relayed(&solicit, &reply);
    let [odd, names, bad_label, overlong, short_opt] = odd_dhcp6(&llt);
    let msgs = [
        solicit,
        advertise,
        request,
        reply,
        relay,
        relay_reply,
        odd,
        names,
        bad_label,
        overlong,
        short_opt,
    ];
    msgs.iter()
        .enumerate()
        .map(|(i, m)| {
            let (sp, dp) = if i % 2 == 0 { (546, 547) } else { (547, 546) };
            ip6(V6A, V6B, udp(sp, dp, m))
        })
        .collect()
}

/// DHCPv6 SOLICIT, ADVERTISE, REQUEST and REPLY with their usual options, relayed messages,
/// odd, unknown and overlong options, and each message cut short.
#[test]
fn dhcp6_lines_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let cuts: Vec<usize> = (0..12)
        .chain((12..200).step_by(5))
        .chain([201, 230, 260, 300])
        .collect();
    let frames = with_cuts(&dhcp6_frames(), 40, &cuts);
    same_as_tcpdump(
        "dhcp6",
        &frames,
        &[
            "dhcp6 solicit (xid=123456 (client-ID hwaddr/time type 1 time",
            "(IA_ADDR 2001:db8::2 pltime:3600 vltime:7200 (status-code Success)))",
            "relay-fwd (linkaddr=",
            " [|dhcp6]",
        ],
    );
}

/// IPv6 addresses with an IPv4 address in their low bits, which tcpdump writes dotted in
/// some forms: ::1.2.3.4, ::ffff:1.2.3.4, ::0.2.3.4, but ::304, ::1, 64::102:304.
fn embedded_v4() -> Vec<u8> {
    let low: [(u16, u16, [u8; 4]); 6] = [
        (0, 0, [1, 2, 3, 4]),
        (0, 0xffff, [1, 2, 3, 4]),
        (0, 0, [0, 2, 3, 4]),
        (0, 0, [0, 0, 3, 4]),
        (0, 0, [0, 0, 0, 1]),
        (0x64, 0, [1, 2, 3, 4]),
    ];
    let mut v = Vec::new();
    for (top, w5, v4) in low {
        v.extend_from_slice(&top.to_be_bytes());
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(&w5.to_be_bytes());
        v.extend_from_slice(&v4);
    }
    v
}
