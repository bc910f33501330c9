//! zcap's lines for the everyday UDP protocols against tcpdump 4.99's, packet for packet, at
//! the default verbosity, -v and -vv: BOOTP/DHCP, NTP, DHCPv6, syslog and TFTP, each in its
//! common shapes, with odd and broken contents, and cut short at many offsets.

use crate::common;

use std::io::BufWriter;
use std::process::Command;
use std::time::Duration;

use common::{stderr, ZCAP};
use zcrx_ring::lab::Need;

mod dhcp6;

fn sum(parts: &[&[u8]]) -> u16 {
    let bytes: Vec<u8> = parts.concat();
    let mut s: u32 = 0;
    for c in bytes.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A UDP datagram from `sport` to `dport` (checksum zero: filled in by `ip4`/`ip6`).
fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u: Vec<u8> = [sport, dport, 8 + payload.len() as u16, 0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    u.extend_from_slice(payload);
    u
}

/// An Ethernet frame with an IPv4 header from `src` to `dst` around `l4` (checksums right
/// unless `bad_sum`).
fn ip4(src: [u8; 4], dst: [u8; 4], mut l4: Vec<u8>, bad_sum: bool) -> Vec<u8> {
    let pseudo = [&src[..], &dst, &[0, 17], &(l4.len() as u16).to_be_bytes()].concat();
    let c = sum(&[&pseudo, &l4]) ^ u16::from(bad_sum);
    l4[6..8].copy_from_slice(&c.to_be_bytes());
    let mut h = vec![0x45, 0x10];
    h.extend_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    h.extend_from_slice(&[0xbe, 0xef, 0, 0, 64, 17, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = sum(&[&h]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    eth(0x0800, [h, l4].concat())
}

/// An Ethernet frame with an IPv6 header from `src` to `dst` around `l4`.
fn ip6(src: [u8; 16], dst: [u8; 16], mut l4: Vec<u8>) -> Vec<u8> {
    let len = (l4.len() as u32).to_be_bytes();
    let c = sum(&[&src, &dst, &len, &[0, 0, 0, 17], &l4]);
    l4[6..8].copy_from_slice(&c.to_be_bytes());
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    h.extend_from_slice(&[17, 1]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    eth(0x86dd, [h, l4].concat())
}

fn eth(ethertype: u16, payload: Vec<u8>) -> Vec<u8> {
    let mut f = vec![0x33, 0x33, 0, 1, 0, 2, 2, 0x42, 0xac, 0x11, 0, 2];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend(payload);
    f.resize(f.len().max(60), 0);
    f
}

/// Each frame whole, then cut after each of `cuts` bytes of its UDP payload (those inside
/// it): (frame, bytes captured).
fn with_cuts(frames: &[Vec<u8>], l3_len: usize, cuts: &[usize]) -> Vec<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    for f in frames {
        out.push((f.clone(), f.len()));
        for &c in cuts {
            let at = 14 + l3_len + 8 + c;
            if at < f.len() {
                out.push((f.clone(), at));
            }
        }
    }
    out
}

/// A pcap file of frames captured `caplen` bytes each, a second apart.
fn write(path: &std::path::Path, frames: &[(Vec<u8>, usize)]) {
    let f = std::fs::File::create(path).unwrap();
    let header = pcap_file::pcap::PcapHeader {
        snaplen: 262_144,
        ..Default::default()
    };
    let mut w = pcap_file::pcap::PcapWriter::with_header(BufWriter::new(f), header).unwrap();
    for (i, (frame, caplen)) in frames.iter().enumerate() {
        let ts = Duration::new(1_700_000_000 + i as u64, 250_000);
        let pkt = pcap_file::pcap::PcapPacket::new(ts, frame.len() as u32, &frame[..*caplen]);
        w.write_packet(&pkt).unwrap();
    }
}

/// The output's packets: a line that does not start with white space begins one.
fn packets(tool: &str, path: &std::path::Path, flags: &[&str]) -> Vec<String> {
    let out = Command::new(tool)
        .env("TZ", "UTC")
        .arg("-n")
        .args(flags)
        .arg("-r")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {flags:?}: {}", stderr(&out));
    let mut pkts: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        match pkts.last_mut() {
            Some(p) if line.starts_with([' ', '\t']) => {
                p.push('\n');
                p.push_str(line);
            }
            _ => pkts.push(line.to_string()),
        }
    }
    pkts
}

/// zcap prints every packet of `frames` as tcpdump does at the default verbosity, -v and -vv;
/// returns how many packets were compared at each.
fn same_as_tcpdump(name: &str, frames: &[(Vec<u8>, usize)], shown: &[&str]) -> usize {
    let path = common::tmp(&format!("{name}.pcap"));
    write(&path, frames);
    for flags in [&[][..], &["-v"], &["-vv"]] {
        let (t, z) = (
            packets("tcpdump", &path, flags),
            packets(ZCAP, &path, flags),
        );
        assert_eq!(t.len(), frames.len(), "{name} {flags:?}: {t:#?}");
        for (i, (a, b)) in t.iter().zip(&z).enumerate() {
            assert_eq!(a, b, "{name} {flags:?}, packet {i}");
        }
        assert_eq!(t.len(), z.len(), "{name} {flags:?}");
        if flags == ["-v"] {
            let all = t.join("\n");
            for s in shown {
                assert!(all.contains(s), "{name}: {s:?} not in {all}");
            }
        }
    }
    eprintln!(
        "{name}: {} packets identical at 3 verbosities",
        frames.len()
    );
    frames.len()
}

const CLIENT: [u8; 6] = [2, 0x42, 0xac, 0x11, 0, 2];

/// A BOOTP message: op, htype/hlen, xid, flags, the four addresses, sname and file, then
/// `vend` (the magic cookie's and the options' bytes), padded to 300 bytes.
fn bootp(op: u8, hw: (u8, u8), addrs: [[u8; 4]; 4], names: (&[u8], &[u8]), vend: &[u8]) -> Vec<u8> {
    let mut m = vec![op, hw.0, hw.1, u8::from(op == 2)];
    m.extend_from_slice(&0x3903_f326u32.to_be_bytes());
    m.extend_from_slice(&[0, u8::from(op == 1) * 3, 0x80 * u8::from(op == 1), 0]);
    for a in addrs {
        m.extend_from_slice(&a);
    }
    let mut chaddr = CLIENT.to_vec();
    chaddr.resize(16, 0);
    m.extend(chaddr);
    for (field, n) in [(names.0, 64), (names.1, 128)] {
        let mut f = field.to_vec();
        f.resize(n, 0);
        m.extend(f);
    }
    m.extend_from_slice(vend);
    m.resize(m.len().max(300), 0);
    m
}

/// The magic cookie and `opts` (each code, then its bytes with their length before them;
/// 0 and 255 alone).
fn dhcp_opts(opts: &[(u8, &[u8])]) -> Vec<u8> {
    let mut v = vec![99, 130, 83, 99];
    for (code, body) in opts {
        v.push(*code);
        if *code != 0 && *code != 255 {
            v.push(body.len() as u8);
            v.extend_from_slice(body);
        }
    }
    v
}

/// Vendor areas with odd, unknown and overlong options, and a CMU one.
fn odd_vendor_areas() -> [Vec<u8>; 3] {
    let odd = dhcp_opts(&[
        (53, &[9, 9]),
        (53, &[42]),
        (200, &[1, 2, 3]),
        (201, &[1, 2, 3, 4]),
        (202, &[1, 2, 3, 4, 5, 6]),
        (1, &[255, 255, 0, 0, 7]),
        (61, b"\0text\x01\xff"),
        (61, &[99, 1, 2]),
        (61, &[]),
        (121, &[1, 2]),
        (121, &[33, 1, 2, 3, 4, 5]),
        (249, &[24, 10, 1, 2, 192, 0]),
        (77, &[0, 1]),
        (77, &[5, 1]),
        (82, &[1, 9, 1]),
        (81, &[0xf3, 1, 2, b'x']),
        (81, &[0]),
        (46, &[3]),
        (25, &[5, 220, 1]),
        (24, &[0, 0, 2, 88]),
        (255, &[]),
    ]);
    let overlong = [
        dhcp_opts(&[(53, &[1]), (12, b"abc")]),
        vec![15, 250, b'x', b'y'],
    ]
    .concat();
    let mut cmu = b"CMU\0".to_vec();
    cmu.extend_from_slice(&[0, 0, 0, 3, 255, 255, 255, 0, 192, 0, 2, 1]);
    cmu.extend_from_slice(&[0; 12]);
    cmu.extend_from_slice(&[9, 9, 9, 9]);
    [odd, overlong, cmu]
}

/// The options of a DHCP DISCOVER, OFFER, REQUEST and ACK.
fn usual_vendor_areas() -> [Vec<u8>; 4] {
    let (server, yours) = ([192, 0, 2, 1], [192, 0, 2, 77]);
    let params: &[u8] = &[1, 3, 6, 15, 119, 252, 28, 51, 58, 59, 43, 200];
    let discover = dhcp_opts(&[
        (53, &[1]),
        (61, &[1, 2, 0x42, 0xac, 0x11, 0, 2]),
        (50, &yours),
        (12, b"zcrx-host"),
        (55, params),
        (57, &[5, 0xdc]),
        (60, b"udhcp 1.36.1"),
        (255, &[]),
    ]);
    let offer = dhcp_opts(&[
        (53, &[2]),
        (54, &server),
        (51, &[0, 1, 0x51, 0x80]),
        (58, &[0, 0, 0xa8, 0xc0]),
        (59, &[0, 1, 0x27, 0x50]),
        (1, &[255, 255, 255, 0]),
        (3, &server),
        (6, &[192, 0, 2, 53, 198, 51, 100, 53]),
        (15, b"example.net"),
        (28, &[192, 0, 2, 255]),
        (255, &[]),
    ]);
    let request = dhcp_opts(&[
        (53, &[3]),
        (50, &yours),
        (54, &server),
        (12, b"zcrx-host"),
        (81, &[1, 0, 0, b'z', b'c', b'r', b'x']),
        (55, &params[..7]),
        (255, &[]),
    ]);
    let ack = dhcp_opts(&[
        (53, &[5]),
        (54, &server),
        (51, &[0xff, 0xff, 0xff, 0xff]),
        (
            121,
            &[
                24, 10, 1, 2, 192, 0, 2, 1, 0, 192, 0, 2, 254, 32, 1, 2, 3, 4, 9, 9, 9, 9,
            ],
        ),
        (
            82,
            &[
                1, 4, b'e', b't', b'h', b'0', 2, 2, 0xab, 0xcd, 9, 3, 1, 2, 3,
            ],
        ),
        (46, &[8]),
        (52, &[3]),
        (77, &[3, b'a', b'b', b'c', 2, b'x', b'y']),
        (2, &[0xff, 0xff, 0xf1, 0xf0]),
        (0, &[]),
        (0, &[]),
        (19, &[0, 1, 2]),
        (33, &[10, 0, 0, 0, 192, 0, 2, 1]),
        (255, &[]),
    ]);
    [discover, offer, request, ack]
}

fn dhcp_frames() -> Vec<Vec<u8>> {
    let (zero, bcast) = ([0; 4], [255; 4]);
    let (server, yours) = ([192, 0, 2, 1], [192, 0, 2, 77]);
    let [discover, offer, request, ack] = usual_vendor_areas();
    let [odd, overlong, cmu] = odd_vendor_areas();
    let names: (&[u8], &[u8]) = (b"boot-server", b"/pxelinux.0\x01");
    let full: [[u8; 4]; 4] = [[10, 0, 0, 9], yours, server, [10, 9, 8, 7]];
    let messages = vec![
        (
            68,
            67,
            zero,
            bcast,
            bootp(1, (1, 6), [zero; 4], (b"", b""), &discover),
        ),
        (
            67,
            68,
            server,
            yours,
            bootp(2, (1, 6), [zero, yours, server, zero], (b"", b""), &offer),
        ),
        (
            68,
            67,
            zero,
            bcast,
            bootp(1, (1, 6), [zero; 4], (b"", b""), &request),
        ),
        (67, 68, server, yours, bootp(2, (1, 6), full, names, &ack)),
        (
            68,
            67,
            zero,
            bcast,
            bootp(1, (6, 6), full, (b"s", b""), &odd),
        ),
        (
            68,
            67,
            zero,
            bcast,
            bootp(1, (1, 8), [zero; 4], (b"", b""), &overlong),
        ),
        (
            67,
            68,
            server,
            yours,
            bootp(3, (1, 6), [zero; 4], (b"", b""), &cmu),
        ),
        (
            67,
            68,
            server,
            yours,
            bootp(2, (1, 6), [zero; 4], (b"", b""), &[1, 2, 3, 4]),
        ),
        (
            67,
            68,
            server,
            yours,
            bootp(2, (1, 6), [zero; 4], (b"", b""), &[]),
        ),
    ];
    messages
        .into_iter()
        .enumerate()
        .map(|(i, (sp, dp, src, dst, m))| ip4(src, dst, udp(sp, dp, &m), i == 2))
        .collect()
}

/// DHCP's DISCOVER, OFFER, REQUEST and ACK with their usual options, odd and unknown
/// options, an overlong one, CMU and other vendor areas, and each message cut short.
#[test]
fn dhcp_lines_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let cuts: Vec<usize> = [0, 1, 2, 3, 5, 8, 11, 12, 27, 29, 35, 44, 45, 60, 108, 110]
        .into_iter()
        .chain([
            200, 235, 236, 238, 240, 241, 242, 243, 245, 250, 255, 262, 270, 290,
        ])
        .collect();
    let frames = with_cuts(&dhcp_frames(), 20, &cuts);
    same_as_tcpdump(
        "dhcp",
        &frames,
        &[
            "BOOTP/DHCP, Request from 02:42:ac:11:00:02",
            "DHCP-Message (53), length 1: Discover",
            "Classless-Static-Route (121)",
            " [|bootp]",
        ],
    );
}

const V6A: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const V6B: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

/// An NTP time message: LI/VN/mode, stratum, poll, precision, root delay and dispersion,
/// reference ID, then the four time stamps and `tail`.
fn ntp(lvm: u8, stratum: u8, poll: i8, refid: [u8; 4], stamps: [u64; 4], tail: &[u8]) -> Vec<u8> {
    let mut m = vec![lvm, stratum, poll as u8, 0xe9];
    m.extend_from_slice(&[0, 0, 0x1c, 0x71, 0, 1, 0x8a, 0x3d]);
    m.extend_from_slice(&refid);
    for t in stamps {
        m.extend_from_slice(&t.to_be_bytes());
    }
    m.extend_from_slice(tail);
    m
}

fn ntp_frames() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (a, b) = ([192, 0, 2, 10], [192, 0, 2, 123]);
    let now = 0xe8f1_2a3b_8000_0000u64;
    let later = 0xe8f1_2a3c_1234_5678u64;
    let earlier = 0xe8f1_2a3a_ffff_ffffu64;
    let key = [0, 0, 0, 7];
    let md5 = [&key[..], &[0xa5; 16]].concat();
    let sha1 = [&key[..], &[0x5a; 20]].concat();
    let times = vec![
        ntp(0xe3, 0, 6, [0; 4], [0, 0, 0, now], &[]),
        ntp(0x24, 2, 6, [192, 0, 2, 1], [now, now, later, later], &[]),
        ntp(0x1b, 0, 10, [0; 4], [0, 0, 0, now], &[]),
        ntp(0x1c, 1, 4, *b"GPS\0", [earlier, now, later, earlier], &[]),
        ntp(0x5c, 3, -6, [10, 1, 2, 3], [now, later, now, now], &key),
        ntp(0x9c, 4, 40, [10, 1, 2, 3], [now, later, now, earlier], &md5),
        ntp(
            0x21,
            16,
            -40,
            [10, 1, 2, 3],
            [1, 0x7fff_ffff_0000_0001, u64::MAX, now],
            &sha1,
        ),
        ntp(0x25, 62, 0, [10, 1, 2, 3], [now; 4], &[]),
        ntp(0x25, 63, 0, [10, 1, 2, 3], [now; 4], &[]),
        ntp(0xe4, 0, 17, *b"RATE", [0, now, now, now], &[1; 12]),
        ntp(0x22, 5, 1, *b"\x01\xff a", [now, later, earlier, 0], &[]),
        ntp(0x27, 5, 1, [0; 4], [now; 4], &[]),
        ntp(0x20, 5, 1, [0; 4], [now; 4], &[]),
        vec![0x23, 1, 2, 3, 4, 5, 6, 7],
    ];
    let controls = vec![
        vec![0x16, 0x02, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
        [
            &[0x16, 0xa2, 0, 1, 0x06, 0x18, 0, 3, 0, 0, 0, 8][..],
            b"version=",
        ]
        .concat(),
        vec![
            0x16, 0xc1, 0xff, 0xff, 0x80, 0, 0xff, 0xff, 0, 4, 0, 9, 1, 2, 3,
        ],
        vec![0x0e, 0x01, 0, 1, 0, 0],
    ];
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    for m in times.iter().chain(&controls) {
        let reply = m[0] & 7 == 4;
        let (sp, dp) = if reply { (123, 40123) } else { (40123, 123) };
        v4.push(ip4(a, b, udp(sp, dp, m), false));
        v6.push(ip6(V6A, V6B, udp(123, 123, m)));
    }
    (v4, v6)
}

/// NTP v3 and v4 clients and servers, every stratum and poll kind, key IDs and digests,
/// control messages, short messages, over IPv4 and IPv6, and each cut short.
#[test]
fn ntp_lines_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let cuts: Vec<usize> = (0..50).chain([51, 52, 55, 60, 67, 70]).collect();
    let (v4, v6) = ntp_frames();
    let mut frames = with_cuts(&v4, 20, &cuts);
    frames.extend(with_cuts(&v6, 40, &[0, 1, 3, 15, 24, 47, 52]));
    same_as_tcpdump(
        "ntp",
        &frames,
        &[
            "NTPv4, Client, length 48",
            "NTPv3, Client, length 48",
            "Originator - Transmit Timestamp: ",
            "Control Message",
            " [|ntp]",
        ],
    );
}

/// Syslog and TFTP messages over IPv4 and over IPv6.
fn syslog_tftp_frames() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (a, b) = ([192, 0, 2, 5], [192, 0, 2, 2]);
    let mut syslog: Vec<Vec<u8>> = vec![
        b"<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8".to_vec(),
        b"<165>1 2003-10-11T22:14:15.003Z host app - ID47 - \xef\xbb\xbfmsg\x01\x7f\n".to_vec(),
        b"<0>kernel panic".to_vec(),
        b"<191>".to_vec(),
        b"<999>x".to_vec(),
        b"<1000>x".to_vec(),
        b"<>empty".to_vec(),
        b"no priority".to_vec(),
        b"<12".to_vec(),
    ];
    syslog.extend((0..24).map(|f| format!("<{}>facility {f}", f * 8 + f % 8).into_bytes()));
    let tftp: Vec<&[u8]> = vec![
        b"\0\x01pxelinux.0\0octet\0tsize\x000\0blksize\x001468\0",
        b"\0\x02upload.bin\0netascii\0",
        b"\0\x01noterm",
        b"\0\x01name\0mode",
        b"\0\x01name\0",
        b"\0\x01",
        b"\0\x03\0\x01DATA DATA DATA",
        b"\0\x03\0",
        b"\0\x04\0\x01",
        b"\0\x04",
        b"\0\x05\0\x01File not found\0",
        b"\0\x05\0\x09odd code\0",
        b"\0\x05\0\x02",
        b"\0\x05\0\x02\x01\x80\0",
        b"\0\x06blksize\x001468\0\0tsize\0",
        b"\0\x07what",
        b"\0",
    ];
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    for m in &syslog {
        v4.push(ip4(a, b, udp(40514, 514, m), false));
        v6.push(ip6(V6A, V6B, udp(514, 514, m)));
    }
    for m in &tftp {
        v4.push(ip4(a, b, udp(40069, 69, m), false));
        v6.push(ip6(V6A, V6B, udp(69, 40069, m)));
    }
    (v4, v6)
}

/// Syslog messages of every facility and severity, unknown and bad priorities, control
/// characters and high bytes in the text, and TFTP's requests (with options), data, ACKs,
/// errors (known and unknown codes), OACKs and bad opcodes; over IPv4 and IPv6, each cut
/// short.
#[test]
fn syslog_and_tftp_lines_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let (v4, v6) = syslog_tftp_frames();
    let cuts: Vec<usize> = (0..24).chain([30, 40, 50]).collect();
    let mut all = with_cuts(&v4[..2], 20, &cuts);
    all.extend(with_cuts(&v4[2..], 20, &[0, 1, 2, 5]));
    all.extend(with_cuts(&v6, 40, &[0, 1, 3, 8]));
    same_as_tcpdump(
        "syslog-tftp",
        &all,
        &[
            "SYSLOG, length: 76\n\tFacility auth (4), Severity critical (2)",
            "TFTP, length 40, RRQ \"pxelinux.0\" octet tsize 0 blksize 1468",
            " [|tftp]",
            " [|syslog]",
        ],
    );
}

/// Every whole frame above with 1 to 4 of its payload's bytes changed (to 0, 1, 2, 3, 0x80,
/// 0xc0, 0xff or any value), a quarter of them cut short too: 40 variants a frame, the same
/// on every run.
fn mutated(frames: &[Vec<u8>], l3_len: usize, seed: u64) -> Vec<(Vec<u8>, usize)> {
    let mut x = seed;
    let mut next = move |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 33) as usize) % n.max(1)
    };
    let mut out = Vec::new();
    for f in frames {
        let start = 14 + l3_len + 8;
        // The payload's end by the IP header (not the Ethernet padding).
        let end =
            14 + l3_len + usize::from(u16::from_be_bytes([f[14 + l3_len + 4], f[14 + l3_len + 5]]));
        if end <= start {
            continue;
        }
        for _ in 0..40 {
            let mut g = f.clone();
            for _ in 0..=next(4) {
                let at = start + next(end - start);
                g[at] = [0, 1, 2, 3, 0x80, 0xc0, 0xff, next(256) as u8][next(8)];
            }
            let cut = if next(4) == 0 {
                start + next(end - start + 1)
            } else {
                g.len()
            };
            out.push((g, cut));
        }
    }
    out
}

/// Damaged messages of every protocol here print as tcpdump prints them.
#[test]
fn damaged_messages_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let (ntp4, ntp6) = ntp_frames();
    let (sys4, sys6) = syslog_tftp_frames();
    let mut all = mutated(&dhcp_frames(), 20, 1);
    all.extend(mutated(&ntp4, 20, 2));
    all.extend(mutated(
        &[ntp6, sys6, dhcp6::dhcp6_frames()].concat(),
        40,
        3,
    ));
    all.extend(mutated(&sys4, 20, 4));
    same_as_tcpdump("damaged", &all, &[]);
}
