//! zcap's SCTP and LLDP lines against tcpdump 4.99's, packet for packet, on crafted
//! captures — every chunk type tcpdump names, SACK gap blocks and duplicates, bad chunk
//! lengths, cut packets; LLDP's common TLVs, bad TLV lengths, cut frames — at default, -v,
//! -vv, -e, -q and -vv -x. STP BPDUs (config, TCN, RSTP, MSTP, SPB, wrong lengths, cut)
//! against tcpdump's text after the link layer, through zcap's STP printer.

use crate::common;

use std::time::Duration;

use common::ZCAP;
use zcrx_ring::lab::Need;

const A4: [u8; 4] = [198, 18, 0, 1];
const B4: [u8; 4] = [198, 18, 0, 2];
const MA: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MB: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn ether(dst: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&MA);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    while f.len() < 60 {
        f.push(0);
    }
    f
}

fn ip_sum(h: &[u8]) -> u16 {
    let mut s: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An SCTP packet over IPv4 (or IPv6) in Ethernet; `ip_len` overrides what the IP header
/// says the SCTP packet's length is.
fn sctp_frame(ports: (u16, u16), chunks: &[u8], v6: bool, ip_len: Option<usize>) -> Vec<u8> {
    let mut s = ports.0.to_be_bytes().to_vec();
    s.extend_from_slice(&ports.1.to_be_bytes());
    s.extend_from_slice(&[0, 0, 0, 7, 0x12, 0x34, 0x56, 0x78]);
    s.extend_from_slice(chunks);
    let len = ip_len.unwrap_or(s.len());
    if v6 {
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&(len as u16).to_be_bytes());
        h.extend_from_slice(&[132, 64]);
        h.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        h.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        h.extend_from_slice(&s);
        return ether(MB, 0x86dd, &h);
    }
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&((20 + len) as u16).to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, 132, 0, 0]);
    h.extend_from_slice(&A4);
    h.extend_from_slice(&B4);
    let c = ip_sum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(&s);
    ether(MB, 0x0800, &h)
}

/// A chunk: type, flags, value (its length field counts the value; padded to 4).
fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    chunk_len(kind, flags, value, 4 + value.len())
}

fn chunk_len(kind: u8, flags: u8, value: &[u8], len: usize) -> Vec<u8> {
    let mut c = vec![kind, flags];
    c.extend_from_slice(&(len as u16).to_be_bytes());
    c.extend_from_slice(value);
    while c.len() % 4 != 0 {
        c.push(0);
    }
    c
}

fn be32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

fn init(kind: u8, params: &[u8]) -> Vec<u8> {
    let mut v = be32s(&[0xdead_beef, 65535]);
    v.extend_from_slice(&[0, 10, 0, 5]);
    v.extend_from_slice(&be32s(&[4_000_000_000]));
    v.extend_from_slice(params);
    chunk(kind, 0, &v)
}

fn data(flags: u8, ppid: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = be32s(&[77]);
    v.extend_from_slice(&[0, 3, 0, 9]);
    v.extend_from_slice(&be32s(&[ppid]));
    v.extend_from_slice(payload);
    chunk(0, flags, &v)
}

fn sack(gaps: &[(u16, u16)], dups: &[u32], counts: Option<(u16, u16)>) -> Vec<u8> {
    let (g, d) = counts.unwrap_or((gaps.len() as u16, dups.len() as u16));
    let mut v = be32s(&[4_294_967_290, 9000]);
    v.extend_from_slice(&g.to_be_bytes());
    v.extend_from_slice(&d.to_be_bytes());
    for (s, e) in gaps {
        v.extend_from_slice(&s.to_be_bytes());
        v.extend_from_slice(&e.to_be_bytes());
    }
    v.extend_from_slice(&be32s(dups));
    chunk(3, 0, &v)
}

/// A heartbeat request.
fn heartbeat() -> Vec<u8> {
    chunk(4, 0, &[0, 1, 0, 8, 1, 2, 3, 4])
}

/// The chunks of the test's SCTP packets over IPv4, one packet each.
fn sctp_chunks() -> Vec<Vec<u8>> {
    let hb = heartbeat();
    let cause = [0, 1, 0, 8, 0, 5, 0, 0];
    vec![
        init(1, &[]),
        init(1, &[0, 5, 0, 8, 198, 18, 0, 1, 0, 0xc, 0, 6, 0, 5, 0, 0]),
        init(2, &[0, 7, 0, 8, 1, 2, 3, 4]),
        data(0x03, 0, b"hello"),
        data(0x07, 7, b"x"),
        data(
            0x01,
            46,
            b"an odd payload, long enough to take two lines of the dump",
        ),
        data(0x00, 18, b"abcd"),
        data(0x02, 0, b""),
        [data(0x03, 0, b"hello"), sack(&[], &[], None)].concat(),
        sack(&[(2, 4), (7, 9)], &[5, 6, 4_294_967_295], None),
        sack(&[(2, 4)], &[], Some((3, 0))),
        sack(&[(2, 4)], &[], Some((0, 1))),
        hb.clone(),
        chunk(5, 0, &[0, 1, 0, 8, 1, 2, 3, 4]),
        chunk(6, 0, &cause),
        chunk(6, 1, &[]),
        chunk(7, 0, &be32s(&[12])),
        chunk(8, 0, &[]),
        chunk(0xe, 0, &[]),
        chunk(9, 0, &cause),
        chunk(0xa, 0, b"cookie!"),
        chunk(0xb, 0, &[]),
        chunk(0xc, 0, &be32s(&[1])),
        chunk(0xd, 0, &be32s(&[1])),
        chunk(0xc0, 0, &be32s(&[1])),
        chunk(0xc1, 0, &[]),
        chunk(0xc2, 0, &[]),
        chunk(0x55, 0xff, &[1, 2, 3]),
        chunk(0x80, 0, &[]),
        [chunk(0xb, 0, &[]), chunk(7, 0, &be32s(&[1])), hb.clone()].concat(),
        chunk_len(1, 0, &[0; 8], 12),
        chunk_len(3, 0, &[0; 8], 12),
        chunk_len(0, 0, &[0; 8], 12),
        chunk_len(0x55, 0, &[], 2),
        chunk_len(0x55, 0, &[], 0),
        chunk_len(0x55, 0, &[1, 2, 3], 7),
        chunk_len(0x55, 0, &[1, 2, 3, 4], 200),
        [chunk(0xb, 0, &[]), vec![0x0b, 0]].concat(),
        vec![],
    ]
}

/// Every SCTP packet of the test, with its length on the wire.
fn sctp_frames() -> Vec<(Vec<u8>, u32)> {
    let p = (5000, 5001);
    let hb = heartbeat();
    let mut frames: Vec<Vec<u8>> = sctp_chunks()
        .iter()
        .map(|c| sctp_frame(p, c, false, None))
        .collect();
    frames.push(sctp_frame(p, &hb, true, None));
    frames.push(sctp_frame(p, &data(3, 0, b"six"), true, None));
    frames.push(sctp_frame((6704, 5001), &init(1, &[]), false, None));
    frames.push(sctp_frame((5001, 6706), &chunk(0xb, 0, &[]), false, None));
    frames.push(sctp_frame(p, &chunk(0xb, 0, &[]), false, Some(8)));
    frames.push(sctp_frame(p, &chunk(0xb, 0, &[]), false, Some(14)));
    frames.push(sctp_frame(p, &hb, false, Some(10)));
    let mut all: Vec<(Vec<u8>, u32)> = frames
        .into_iter()
        .map(|f| {
            let n = f.len() as u32;
            (f, n)
        })
        .collect();
    let full = sctp_frame(
        p,
        &[
            data(3, 0, b"hello"),
            sack(&[(1, 2)], &[3], None),
            init(1, &[]),
        ]
        .concat(),
        false,
        None,
    );
    // From the IP header on (shorter ones are the IP printer's).
    for cut in 34..full.len() {
        all.push((full[..cut].to_vec(), full.len() as u32));
    }
    all
}

fn tlv(t: u16, v: &[u8]) -> Vec<u8> {
    let mut b = ((t << 9) | v.len() as u16).to_be_bytes().to_vec();
    b.extend_from_slice(v);
    b
}

/// LLDP frames: the common TLVs in their forms, bad lengths, unknown ones, cuts.
fn lldp_frames() -> Vec<(Vec<u8>, u32)> {
    let dst = [0x01, 0x80, 0xc2, 0, 0, 0x0e];
    let v6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9];
    let mgmt6 = [&[17u8, 2][..], &v6, &[3, 0, 0, 0, 2, 0]].concat();
    let full = [
        tlv(1, &[4, 2, 0, 0, 0, 0, 1]),
        tlv(2, b"\x05eth0"),
        tlv(3, &[0, 120]),
        tlv(4, b"uplink to core\x01"),
        tlv(5, b"lab"),
        tlv(6, b"Debian GNU/Linux 12 (bookworm) Linux 6.1.0 x86_64"),
        tlv(7, &[0, 0x9c, 0, 0x14]),
        tlv(8, &[5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 3, 6, 1, 2, 3, 4, 5, 6]),
        tlv(8, &mgmt6),
        tlv(127, &[0, 0, 0x0c, 1, 2, 3]),
        tlv(127, &[0x12, 0x34, 0x56, 1]),
        tlv(20, &[1, 2, 3]),
        tlv(0, &[]),
    ]
    .concat();
    let ids: Vec<Vec<u8>> = vec![
        tlv(1, &[5, 1, 198, 18, 0, 1]),
        tlv(
            1,
            &[5, 2, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ),
        tlv(1, &[5, 6, 2, 0, 0, 0, 0, 9]),
        tlv(1, &[5, 9, 1, 2]),
        tlv(1, &[5, 1, 198]),
        tlv(1, &[7, b'c', b'h', 0, b'x']),
        tlv(1, &[1, b'c']),
        tlv(1, &[9, 1, 2, 3]),
        tlv(1, &[4, 2, 0]),
        tlv(1, &[4]),
        tlv(2, &[3, 2, 0, 0, 0, 0, 2]),
        tlv(2, &[4, 1, 10, 0, 0, 2]),
        tlv(2, &[1, b'a', b'l', b'i', b'a', b's']),
        tlv(2, &[6, 0xe9, 0x7f]),
        tlv(2, &[0, 1]),
        tlv(3, &[0]),
        tlv(7, &[0, 1]),
        tlv(7, &[0xff, 0xff, 0, 0]),
        tlv(8, &[5, 1, 10, 0, 0, 1]),
        tlv(8, &[5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 3]),
        tlv(8, &[5, 1, 10, 0, 0, 1, 9, 0, 0, 0, 3, 9, 1]),
        tlv(8, &[3, 7, 1, 2, 4, 0, 0, 0, 0, 0]),
        tlv(8, &[9, 1, 10]),
        tlv(127, &[0, 0]),
        tlv(4, &[]),
        vec![0x0a, 0x40, 1, 2],
        vec![0],
    ];
    let mut frames: Vec<(Vec<u8>, u32)> = vec![];
    let whole = ether(dst, 0x88cc, &full);
    frames.push((whole.clone(), whole.len() as u32));
    for id in ids {
        let body = [id, tlv(5, b"sw"), tlv(0, &[])].concat();
        let f = ether(dst, 0x88cc, &body);
        let n = f.len() as u32;
        frames.push((f, n));
    }
    for cut in [
        15,
        16,
        17,
        20,
        24,
        30,
        40,
        60,
        80,
        100,
        140,
        170,
        whole.len() - 1,
    ] {
        frames.push((whole[..cut].to_vec(), whole.len() as u32));
    }
    frames
}

/// Each packet's text from `tool -n -# FLAGS`.
fn run(tool: &str, path: &std::path::Path, flags: &[&str]) -> Vec<String> {
    common::numbered_packets(tool, path, &[&["-n"][..], flags].concat())
}

fn write(path: &std::path::Path, frames: &[(Vec<u8>, u32)]) {
    let stamped = frames.iter().enumerate().map(|(i, (f, wire))| {
        let ts = Duration::new(1_700_000_000 + i as u64, 1000 * i as u32);
        (ts, &f[..], *wire)
    });
    common::write_pcap_cut(path, stamped);
}

#[test]
fn sctp_and_lldp_print_as_tcpdump_prints_them() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = common::tmp("l2-lines.pcap");
    let mut frames = sctp_frames();
    frames.extend(lldp_frames());
    write(&path, &frames);
    let mut failures = Vec::new();
    for flags in [
        &[][..],
        &["-v"],
        &["-vv"],
        &["-e"],
        &["-q"],
        &["-vv", "-x"],
        &["-e", "-vv"],
    ] {
        let (t, z) = (run("tcpdump", &path, flags), run(ZCAP, &path, flags));
        assert_eq!(t.len(), frames.len(), "{flags:?}: tcpdump's packets");
        assert_eq!(z.len(), t.len(), "{flags:?}: zcap's packets");
        let differ: Vec<_> = t.iter().zip(&z).filter(|(a, b)| a != b).collect();
        eprintln!(
            "{flags:?}: {} of {} packets identical",
            t.len() - differ.len(),
            t.len()
        );
        for (a, b) in differ.iter().take(3) {
            failures.push(format!("{flags:?}\ntcpdump: {a}\nzcap:    {b}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An 802.3 frame with an STP LLC header and `bpdu`, its length field covering them.
fn stp_frame(bpdu: &[u8]) -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 0];
    f.extend_from_slice(&MA);
    f.extend_from_slice(&((3 + bpdu.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0x42, 0x42, 0x03]);
    f.extend_from_slice(bpdu);
    while f.len() < 60 {
        f.push(0);
    }
    f
}

fn bpdu(version: u8, kind: u8, flags: u8) -> Vec<u8> {
    let mut b = vec![0, 0, version, kind, flags];
    b.extend_from_slice(&[0x80, 0, 2, 0, 0, 0, 0, 1]);
    b.extend_from_slice(&20_000u32.to_be_bytes());
    b.extend_from_slice(&[0x70, 5, 2, 0, 0, 0, 0, 2]);
    b.extend_from_slice(&[0x80, 0x02, 0x01, 0x20, 0x14, 0, 0x02, 0x00, 0x0f, 0x80]);
    b.push(0);
    b
}

fn mstp(version: u8, mstis: usize) -> Vec<u8> {
    let mut b = bpdu(version, 2, 0x7c);
    let v3len = 64 + 16 * mstis;
    b.extend_from_slice(&(v3len as u16).to_be_bytes());
    b.push(0);
    let mut name = b"region-one".to_vec();
    name.resize(32, 0);
    b.extend_from_slice(&name);
    b.extend_from_slice(&[0, 7]);
    b.extend_from_slice(&(0u8..16).collect::<Vec<_>>());
    b.extend_from_slice(&200_000u32.to_be_bytes());
    b.extend_from_slice(&[0x80, 0, 2, 0, 0, 0, 0, 3, 20]);
    for i in 0..mstis {
        b.extend_from_slice(&[
            0x19 + i as u8,
            0x80 + i as u8,
            1 + i as u8,
            2,
            0,
            0,
            0,
            0,
            4,
        ]);
        b.extend_from_slice(&(100u32 * i as u32).to_be_bytes());
        b.extend_from_slice(&[0x80, 0x90, 19]);
    }
    if version == 4 {
        b.extend_from_slice(&[0, 85, 0]);
        let mut aux = b"aux\x01name".to_vec();
        aux.resize(32, 0);
        b.extend_from_slice(&aux);
        b.extend_from_slice(&[0, 3]);
        b.extend_from_slice(&[0xaa; 16]);
        b.extend_from_slice(&[0xdc, 0, 0x23, 0x45, 0, 7]);
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&[0x5a; 20]);
        b.extend_from_slice(&[0; 10]);
    }
    b
}

fn stp_bpdus() -> Vec<Vec<u8>> {
    let config = bpdu(0, 0, 0x81);
    let mut v = vec![
        config.clone(),
        config[..35].to_vec(),
        bpdu(0, 0, 0),
        vec![0, 0, 0, 0x80],
        bpdu(2, 2, 0x3e),
        bpdu(2, 2, 0x08),
        bpdu(2, 2, 0x04),
        bpdu(2, 2, 0x42),
        bpdu(0, 0x77, 0),
        bpdu(9, 0, 0),
        vec![0, 1, 0, 0],
        vec![0, 0],
        bpdu(2, 0, 0x30),
        mstp(3, 0),
        mstp(3, 2),
        mstp(4, 1),
        config[..20].to_vec(),
        bpdu(3, 2, 0),
    ];
    let mut bad_v1 = mstp(3, 1);
    bad_v1[35] = 1;
    v.push(bad_v1);
    let mut short_v3 = mstp(3, 1);
    short_v3[37] = 200;
    v.push(short_v3);
    v
}

/// What follows the time stamp in a `-#` line.
fn after_stamp(packet: &str) -> String {
    packet.get(23..).unwrap_or_default().to_string()
}

#[test]
fn stp_prints_as_tcpdump_prints_it() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = common::tmp("l2-stp.pcap");
    let mut frames: Vec<(Vec<u8>, u32)> = vec![];
    for b in stp_bpdus() {
        let f = stp_frame(&b);
        let n = f.len() as u32;
        frames.push((f, n));
    }
    let full = stp_frame(&mstp(3, 2));
    for cut in [
        18, 19, 20, 21, 25, 30, 40, 50, 60, 80, 110, 120, 130, 140, 150,
    ] {
        frames.push((full[..cut].to_vec(), full.len() as u32));
    }
    write(&path, &frames);
    let mut failures = Vec::new();
    for (flags, verbose) in [(&[][..], 0u8), (&["-v"], 1), (&["-vv"], 2)] {
        let t = run("tcpdump", &path, flags);
        assert_eq!(t.len(), frames.len(), "{flags:?}: tcpdump's packets");
        let mut same = 0;
        for ((f, _), line) in frames.iter().zip(&t) {
            let len_field = usize::from(u16::from_be_bytes([f[12], f[13]]));
            let end = (14 + len_field).min(f.len());
            let mut z = String::new();
            zcap::dissect::stp::stp(
                &mut z,
                f.get(17..end).unwrap_or_default(),
                len_field - 3,
                verbose,
            );
            if after_stamp(line) == z {
                same += 1;
            } else if failures.len() < 5 {
                failures.push(format!("{flags:?}\ntcpdump: {line}\nzcap:    {z}"));
            }
        }
        eprintln!("STP {flags:?}: {same} of {} packets identical", t.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
