//! zcap's printed lines against tcpdump 4.99 on captures the test builds: TCP, UDP, ICMP and
//! ICMPv6 over IPv4 and IPv6, with and without a VLAN tag, padded short frames, ICMP errors
//! and neighbour discovery, good and bad checksums — for every flag that changes the line:
//! -e, -v, -x, -xx, -X, -XX, -A and the time stamp flags. Offline here; live in live_flags.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::{stderr, ZCAP};
use zcrx_ring::lab::Need;

fn sum(parts: &[&[u8]]) -> u16 {
    let mut s: u32 = 0;
    let bytes: Vec<u8> = parts.concat();
    for c in bytes.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

const A4: [u8; 4] = [198, 18, 0, 1];
const B4: [u8; 4] = [198, 18, 0, 2];
const A6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

/// An IPv4 packet with a correct header checksum (`good_l4`: also the transport's).
fn ip4(proto: u8, mut l4: Vec<u8>, good_l4: bool, ttl: u8, frag: u16) -> Vec<u8> {
    let csum_at = match proto {
        6 => Some(16),
        17 => Some(6),
        1 => Some(2),
        _ => None,
    };
    if let (Some(at), true) = (csum_at, good_l4) {
        let pseudo: Vec<u8> = if proto == 1 {
            Vec::new()
        } else {
            [&A4[..], &B4, &[0, proto], &(l4.len() as u16).to_be_bytes()].concat()
        };
        let c = sum(&[&pseudo, &l4]);
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34]);
    h.extend_from_slice(&frag.to_be_bytes());
    h.extend_from_slice(&[ttl, proto, 0, 0]);
    h.extend_from_slice(&A4);
    h.extend_from_slice(&B4);
    let c = sum(&[&h]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend(l4);
    h
}

fn ip6(next: u8, mut l4: Vec<u8>, good_l4: bool, flow: u32) -> Vec<u8> {
    let at = match next {
        6 => 16,
        17 => 6,
        _ => 2,
    };
    if good_l4 {
        let pseudo = [
            &A6[..],
            &B6,
            &(l4.len() as u32).to_be_bytes(),
            &[0, 0, 0, next],
        ]
        .concat();
        let c = sum(&[&pseudo, &l4]);
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
    let mut h = (0x6000_0000u32 | flow).to_be_bytes().to_vec();
    h.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next, 64]);
    h.extend_from_slice(&A6);
    h.extend_from_slice(&B6);
    h.extend(l4);
    h
}

fn eth(vlan: Option<u16>, ethertype: u16, payload: Vec<u8>) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if let Some(tci) = vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend(payload);
    f.resize(f.len().max(60), 0);
    f
}

fn udp(payload: &[u8]) -> Vec<u8> {
    let mut u = [20000u16, 10000, 8 + payload.len() as u16, 0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect::<Vec<u8>>();
    u.extend_from_slice(payload);
    u
}

fn tcp(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut t = vec![
        0x9c, 0x40, 0, 80, 0, 0, 3, 0xe8, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0,
    ];
    t.extend_from_slice(payload);
    t
}

fn icmp(t: u8, code: u8, rest: &[u8]) -> Vec<u8> {
    let mut m = vec![t, code, 0, 0];
    m.extend_from_slice(rest);
    m
}

/// Every shape the line must get right, each with and without a VLAN tag.
fn frames() -> Vec<Vec<u8>> {
    let text = b"GET / HTTP/1.1\r\nHost: zcrx\r\n\r\n\t tab";
    let inner_udp = ip4(17, udp(b"x"), true, 64, 0x4000);
    let mut inner6 = ip6(17, udp(b"y"), true, 0);
    inner6.truncate(48);
    let mut shapes: Vec<(u16, Vec<u8>)> = vec![
        (
            0x0800,
            ip4(17, udp(b"hello world, zcap!"), true, 64, 0x4000),
        ),
        (0x0800, ip4(17, udp(b"bad"), false, 64, 0)),
        (0x0800, ip4(6, tcp(0x02, b""), true, 64, 0x4000)),
        (0x0800, ip4(6, tcp(0x18, text), true, 128, 0x4000)),
        (
            0x0800,
            ip4(
                1,
                icmp(8, 0, &[0, 9, 0, 1, b'a', b'b', b'c', b'd']),
                true,
                64,
                0,
            ),
        ),
        (0x0800, ip4(1, icmp(0, 0, &[0, 9, 0, 1]), false, 64, 0)),
        (
            0x0800,
            ip4(
                1,
                icmp(3, 3, &[[0u8; 4].as_slice(), &inner_udp].concat()),
                true,
                64,
                0,
            ),
        ),
        (
            0x0800,
            ip4(
                1,
                icmp(11, 0, &[[0u8; 4].as_slice(), &inner_udp].concat()),
                true,
                64,
                0,
            ),
        ),
        (0x0800, ip4(17, udp(b"more"), true, 7, 0x2000)),
        (0x86dd, ip6(17, udp(b"abc"), true, 0)),
        (0x86dd, ip6(17, udp(b"abc"), false, 0x12345)),
        (0x86dd, ip6(6, tcp(0x11, b"bye"), true, 0)),
        (
            0x86dd,
            ip6(
                58,
                icmp(128, 0, &[0, 7, 0, 1, b'p', b'i', b'n', b'g']),
                true,
                0,
            ),
        ),
        (0x86dd, ip6(58, icmp(129, 0, &[0, 7, 0, 1]), false, 0)),
        (
            0x86dd,
            ip6(
                58,
                icmp(135, 0, &[[0u8; 4].as_slice(), &B6].concat()),
                true,
                0,
            ),
        ),
        (
            0x86dd,
            ip6(
                58,
                icmp(136, 0, &[[0x60u8, 0, 0, 0].as_slice(), &B6].concat()),
                true,
                0,
            ),
        ),
        (
            0x86dd,
            ip6(
                58,
                icmp(1, 4, &[[0u8; 4].as_slice(), &inner6].concat()),
                true,
                0,
            ),
        ),
    ];
    let arp = |op: u8, sha: [u8; 6], spa: [u8; 4], tpa: [u8; 4]| -> Vec<u8> {
        [&[0, 1, 8, 0, 6, 4, 0, op][..], &sha, &spa, &[0; 6], &tpa].concat()
    };
    shapes.push((0x0806, arp(1, [2, 0, 0, 0, 0, 1], A4, B4)));
    shapes.push((0x0806, arp(2, [2, 0, 0, 0, 0, 2], B4, A4)));
    let mut out = Vec::new();
    for (et, p) in shapes {
        out.push(eth(None, et, p.clone()));
        out.push(eth(Some((3 << 13) | 100), et, p));
    }
    out
}

/// A pcap file of `frames`, each with its own time stamp (an hour and a second apart).
fn write_frames(path: &std::path::Path, frames: &[Vec<u8>]) {
    let stamped = frames.iter().enumerate().map(|(i, fr)| {
        let ts = Duration::new(1_700_000_000 + i as u64 * 3601, 500_000 + i as u32 * 7);
        (ts, &fr[..])
    });
    common::write_pcap(path, stamped);
}

fn run(tool: &str, path: &std::path::Path, flags: &[&str]) -> String {
    let out = Command::new(tool)
        .env("TZ", "UTC")
        .args(["-n", "-q"])
        .args(flags)
        .arg("-r")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {flags:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// zcap's lines for `flags` are tcpdump's, line for line (at least `min` of them); returns
/// tcpdump's output.
fn same_lines(path: &std::path::Path, flags: &[&str], min: usize) -> String {
    let (t, z) = (run("tcpdump", path, flags), run(ZCAP, path, flags));
    let (tl, zl): (Vec<&str>, Vec<&str>) = (t.lines().collect(), z.lines().collect());
    assert!(tl.len() >= min, "{flags:?}: {} lines: {t}", tl.len());
    for (i, (a, b)) in tl.iter().zip(&zl).enumerate() {
        assert_eq!(a, b, "{flags:?}, line {i}");
    }
    assert_eq!(tl.len(), zl.len(), "{flags:?}");
    t
}

#[test]
fn every_printing_flag_gives_tcpdumps_lines() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = common::tmp("print-flags.pcap");
    write_frames(&path, &frames());
    let n = frames().len();
    for flags in [
        &[][..],
        &["-e"],
        &["-v"],
        &["-e", "-v"],
        &["-x"],
        &["-xx"],
        &["-X"],
        &["-XX"],
        &["-A"],
        &["-v", "-XX"],
        &["-e", "-A"],
        &["-tt"],
        &["-ttt"],
        &["-tttt", "-e"],
        &["-ttttt", "-v"],
        &["-t", "-X", "--nano"],
    ] {
        same_lines(&path, flags, n);
    }
}

/// An IPv4/UDP packet whose header carries `opts` (a multiple of 4 bytes), checksums right.
fn ip4_with_options(opts: &[u8]) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let mut p = ip4(17, udp(b"opt"), true, 64, 0);
    let l4 = p.split_off(20);
    let hl = 20 + opts.len();
    p[0] = 0x40 | (hl / 4) as u8;
    p[2..4].copy_from_slice(&((hl + l4.len()) as u16).to_be_bytes());
    p.extend_from_slice(opts);
    p[10..12].copy_from_slice(&[0, 0]);
    let c = sum(&[&p]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend(l4);
    p
}

/// `-v` lists IPv4 options as tcpdump 4.99 does: router alert, NOP, recorded and source
/// routes with the pointer's commas, every timestamp flavour with its pointer mark and
/// overflow count, security, unknown options and the bad length and pointer notes.
#[test]
fn ipv4_options_are_listed_as_tcpdump_lists_them() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let options: [&[u8]; 13] = [
        &[148, 4, 0, 0],
        &[148, 4, 0, 5],
        &[1, 7, 7, 8, 198, 18, 0, 9],
        &[131, 11, 4, 198, 18, 0, 7, 198, 18, 0, 8, 0],
        &[137, 7, 3, 198, 18, 0, 7, 0],
        &[68, 12, 9, 0, 0, 0, 0, 1, 0, 0, 0, 2],
        &[68, 12, 13, 0, 0, 0, 0, 1, 0, 0, 0, 2],
        &[68, 12, 5, 0x21, 198, 18, 0, 1, 0, 0, 0, 100],
        &[68, 8, 5, 2, 0, 0, 0, 0],
        &[200, 1, 0, 0],
        &[7, 40, 4, 0],
        &[130, 4, 0, 0],
        &[0, 1, 2, 3],
    ];
    let path = common::tmp("ip-options.pcap");
    let frames: Vec<Vec<u8>> = options
        .iter()
        .map(|o| eth(None, 0x0800, ip4_with_options(o)))
        .collect();
    write_frames(&path, &frames);
    for flags in [&["-v"][..], &["-v", "-e"], &[]] {
        let t = same_lines(&path, flags, options.len());
        if flags.contains(&"-v") {
            let listed = t.lines().filter(|l| l.contains(", options (")).count();
            assert_eq!(listed, options.len(), "{t}");
        }
    }
}

/// An IPv6 packet whose extension headers are `chain` (type, bytes after the next-header
/// byte), then `proto` with `l4` (its checksum right: no routing header moves the
/// destination).
fn ip6_with_ext(chain: &[(u8, &[u8])], proto: u8, l4: Vec<u8>) -> Vec<u8> {
    let plain = ip6(proto, l4, true, 0);
    let (hdr, l4) = plain.split_at(40);
    let mut exts = Vec::new();
    for (i, (_, body)) in chain.iter().enumerate() {
        exts.push(chain.get(i + 1).map_or(proto, |c| c.0));
        exts.extend_from_slice(body);
    }
    let mut h = hdr.to_vec();
    h[6] = chain[0].0;
    h[4..6].copy_from_slice(&((exts.len() + l4.len()) as u16).to_be_bytes());
    [h, exts, l4.to_vec()].concat()
}

/// IPv6 extension headers print as tcpdump 4.99 prints them: "HBH ", "DSTOPT ", "frag
/// (off|len) " between the addresses and the ports, the options with -v, no checksum note
/// for a fragment, nothing after a later fragment, the truncation mark after a bad option.
#[test]
fn ipv6_extension_headers_print_as_tcpdump_prints_them() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let hbh_ra: &[u8] = &[0, 5, 2, 0, 0, 1, 0];
    let padn4: &[u8] = &[0, 1, 4, 0, 0, 0, 0];
    let packets = vec![
        ip6_with_ext(&[(0, hbh_ra)], 17, udp(b"hbh")),
        ip6_with_ext(&[(60, padn4)], 17, udp(b"dstopt")),
        ip6_with_ext(&[(44, &[0, 0, 0, 0, 0, 0, 1])], 17, udp(b"atomic")),
        ip6_with_ext(&[(44, &[0, 0, 8, 0, 0, 0, 2])], 17, udp(b"later")),
        ip6_with_ext(&[(0, padn4), (44, &[0, 0, 1, 0, 0, 0, 3])], 17, udp(b"hf")),
        ip6_with_ext(&[(0, hbh_ra)], 6, tcp(0x02, b"")),
        ip6_with_ext(
            &[(0, hbh_ra)],
            58,
            icmp(128, 0, &[0, 7, 0, 1, b'p', b'i', b'n', b'g']),
        ),
        ip6_with_ext(&[(60, &[0, 0x1e, 2, 0xaa, 0xbb, 1, 0])], 17, udp(b"opt")),
        ip6_with_ext(&[(0, &[0, 0, 0, 0, 0, 0, 0])], 17, udp(b"pad1")),
        ip6_with_ext(&[(0, &[0, 5, 1, 0, 1, 1, 0])], 17, udp(b"badra")),
        ip6_with_ext(&[(0, &[0, 1, 10, 0, 0, 0, 0])], 17, udp(b"overrun")),
    ];
    let path = common::tmp("ip6-ext.pcap");
    let frames: Vec<Vec<u8>> = packets
        .iter()
        .flat_map(|p| [None, Some((2 << 13) | 42)].map(|vlan| eth(vlan, 0x86dd, p.clone())))
        .collect();
    write_frames(&path, &frames);
    for flags in [&[][..], &["-e", "-v"], &["-x"]] {
        same_lines(&path, flags, 2 * packets.len());
    }
    let t = same_lines(&path, &["-v"], 2 * packets.len());
    for shown in [
        "HBH (rtalert: 0x0000) (padn) ",
        "DSTOPT ",
        "frag (0x00000001:0|",
        "[|hbhopt]",
    ] {
        assert!(t.contains(shown), "{shown:?} not in {t}");
    }
}
