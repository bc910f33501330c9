//! zcap's DNS lines against tcpdump 4.99's on crafted messages: queries and responses of
//! every common type over UDP/53 (IPv4 and IPv6), mDNS/5353 and TCP/53, EDNS with its
//! options, compression (and its loops), bad labels, error codes, and captures cut at every
//! offset of a message — at the default verbosity, `-v`, `-vv` and `-vvv`.

use crate::common;

use std::io::Write;
use std::process::Command;

use common::{stderr, ZCAP};
use zcrx_ring::lab::Need;

const A4: [u8; 4] = [192, 0, 2, 1];
const B4: [u8; 4] = [192, 0, 2, 53];
const A6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x35];

fn sum(bytes: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in bytes.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet frame of an IPv4 or IPv6 packet carrying `l4` (protocol `proto`), with every
/// checksum right.
fn frame(v6: bool, proto: u8, mut l4: Vec<u8>) -> Vec<u8> {
    let at = if proto == 6 { 16 } else { 6 };
    let len = l4.len();
    let pseudo = if v6 {
        [&A6[..], &B6, &(len as u32).to_be_bytes(), &[0, 0, 0, proto]].concat()
    } else {
        [&A4[..], &B4, &[0, proto], &(len as u16).to_be_bytes()].concat()
    };
    let c = sum(&[pseudo, l4.clone()].concat());
    l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if v6 {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        f.extend_from_slice(&(len as u16).to_be_bytes());
        f.extend_from_slice(&[proto, 64]);
        f.extend_from_slice(&A6);
        f.extend_from_slice(&B6);
    } else {
        let mut h = vec![0x45, 0];
        h.extend_from_slice(&((20 + len) as u16).to_be_bytes());
        h.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, proto, 0, 0]);
        h.extend_from_slice(&A4);
        h.extend_from_slice(&B4);
        let c = sum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&[8, 0]);
        f.extend(h);
    }
    f.extend(l4);
    f
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = [sport, dport, 8 + payload.len() as u16, 0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect::<Vec<u8>>();
    u.extend_from_slice(payload);
    u
}

/// A TCP segment (PSH|ACK) from port 40000 to 53 carrying `payload`.
fn tcp(payload: &[u8]) -> Vec<u8> {
    let mut t = vec![
        0x9c, 0x40, 0, 53, 0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 0x10, 0, 0, 0, 0, 0,
    ];
    t.extend_from_slice(payload);
    t
}

/// A name in labels (`""`: the root).
fn name(n: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in n.split('.').filter(|l| !l.is_empty()) {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

fn header(id: u16, flags: u16, counts: [u16; 4]) -> Vec<u8> {
    [id, flags, counts[0], counts[1], counts[2], counts[3]]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect()
}

fn q(n: &[u8], typ: u16, class: u16) -> Vec<u8> {
    [n, &typ.to_be_bytes(), &class.to_be_bytes()].concat()
}

fn rr(n: &[u8], typ: u16, class: u16, ttl: u32, data: &[u8]) -> Vec<u8> {
    [
        n,
        &typ.to_be_bytes(),
        &class.to_be_bytes(),
        &ttl.to_be_bytes(),
        &(data.len() as u16).to_be_bytes(),
        data,
    ]
    .concat()
}

/// An OPT record: UDP size, extended rcode, DO, options (code, data).
fn opt(size: u16, ext: u8, dnssec_ok: bool, opts: &[(u16, &[u8])]) -> Vec<u8> {
    let mut data = Vec::new();
    for (code, d) in opts {
        data.extend_from_slice(&code.to_be_bytes());
        data.extend_from_slice(&(d.len() as u16).to_be_bytes());
        data.extend_from_slice(d);
    }
    let ttl = u32::from(ext) << 24 | if dnssec_ok { 0x8000 } else { 0 };
    rr(&[0], 41, size, ttl, &data)
}

fn msg(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// Pointer to `off`.
fn ptr(off: u16) -> Vec<u8> {
    (0xc000 | off).to_be_bytes().to_vec()
}

mod messages;

/// A pcap file of (frame, captured length) pairs.
fn write_cut_pcap(path: &std::path::Path, frames: &[(Vec<u8>, usize)]) {
    let mut b: Vec<u8> = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 262_144, 1] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for (i, (f, cap)) in frames.iter().enumerate() {
        let cap = (*cap).min(f.len());
        for v in [1_700_000_000 + i as u32, 0, cap as u32, f.len() as u32] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&f[..cap]);
    }
    std::fs::File::create(path).unwrap().write_all(&b).unwrap();
}

fn run(tool: &str, path: &std::path::Path, flags: &[&str]) -> String {
    let out = Command::new(tool)
        .env("TZ", "UTC")
        .arg("-n")
        .args(flags)
        .arg("-r")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} {flags:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Compares the lines at `flags`; returns (lines, identical lines, the differences).
fn compare(path: &std::path::Path, flags: &[&str]) -> (usize, usize, Vec<String>) {
    let (t, z) = (run("tcpdump", path, flags), run(ZCAP, path, flags));
    let (tl, zl): (Vec<&str>, Vec<&str>) = (t.lines().collect(), z.lines().collect());
    let mut diffs = Vec::new();
    let mut same = 0;
    for (i, a) in tl.iter().enumerate() {
        match zl.get(i) {
            Some(b) if a == b => same += 1,
            b => diffs.push(format!("{flags:?} #{i}\n  tcpdump: {a}\n  zcap:    {b:?}")),
        }
    }
    if zl.len() != tl.len() {
        diffs.push(format!("{flags:?}: {} vs {} lines", tl.len(), zl.len()));
    }
    (tl.len(), same, diffs)
}

#[test]
fn dns_lines_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let mut frames: Vec<(Vec<u8>, usize)> = Vec::new();
    for (port, m) in messages::udp_messages() {
        for v6 in [false, true] {
            let f = frame(v6, 17, udp(port.0, port.1, &m));
            frames.push((f.clone(), f.len()));
        }
    }
    // A UDP length short of the IP length: the DNS length is UDP's (and -vv's sum is wrong).
    for (port, m) in messages::udp_messages().into_iter().take(2) {
        let mut u = udp(port.0, port.1, &m);
        u.extend_from_slice(&[0; 6]);
        let f = frame(false, 17, u);
        frames.push((f.clone(), f.len()));
    }
    // Captures cut at every offset of a few messages' DNS part.
    for m in messages::cut_messages() {
        let f = frame(false, 17, udp(33333, 53, &m));
        for cap in 42..f.len() {
            frames.push((f.clone(), cap));
        }
    }
    let path = common::tmp("dns-lines.pcap");
    write_cut_pcap(&path, &frames);
    let mut all = Vec::new();
    for flags in [&[][..], &["-v"], &["-vv"], &["-vvv"]] {
        let (n, same, diffs) = compare(&path, flags);
        assert!(n >= frames.len(), "{flags:?}");
        eprintln!("{flags:?}: {same}/{n} lines identical");
        all.extend(diffs);
    }
    assert!(
        all.is_empty(),
        "{} differences:\n{}",
        all.len(),
        all.join("\n")
    );
}

/// DNS over TCP: tcpdump's text after `, length N` is the TCP printer's (the TCP line
/// itself is compared elsewhere).
#[test]
fn dns_over_tcp_is_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let mut payloads: Vec<Vec<u8>> = messages::tcp_messages()
        .into_iter()
        .map(|m| [&(m.len() as u16).to_be_bytes()[..], &m].concat())
        .collect();
    payloads.push(vec![0]);
    payloads.push(vec![0, 40, 1, 2, 3]);
    payloads.push(vec![0, 3, 1, 2, 3]);
    let frames: Vec<(Vec<u8>, usize)> = payloads
        .iter()
        .flat_map(|p| [false, true].map(|v6| frame(v6, 6, tcp(p))))
        .map(|f| (f.clone(), f.len()))
        .collect();
    let path = common::tmp("dns-tcp.pcap");
    write_cut_pcap(&path, &frames);
    for (flags, verbose) in [(&[][..], 0u8), (&["-v"], 1), (&["-vv"], 2)] {
        let t = run("tcpdump", &path, flags);
        let lines: Vec<&str> = t.lines().filter(|l| l.contains("Flags [")).collect();
        assert_eq!(lines.len(), frames.len(), "{t}");
        for (i, l) in lines.iter().enumerate() {
            let p = &payloads[i / 2];
            let mark = format!(", length {}", p.len());
            let at = l.find(&mark).unwrap_or_else(|| panic!("{l}"));
            let text = &l[at + mark.len()..];
            let mut out = String::new();
            let pl = zcap::dissect::app::Payload {
                names: false,
                data: p,
                len: p.len(),
                sport: 40000,
                dport: 53,
                verbose,
                jumped: &std::cell::Cell::new(false),
            };
            zcap::dissect::app::dns::tcp(&mut out, &pl);
            assert_eq!(out, text, "{flags:?} #{i}: {l}");
        }
    }
}
