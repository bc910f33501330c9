//! Writes the seed corpora of the fuzz targets from the test frames: every link type the
//! extractor knows, VLAN tags in band and out of band, IPv6 extension headers, fragments,
//! pcap and pcapng files (whole and cut by a snaplen), and TPACKET_V3 blocks laid out by the
//! synthetic ring. `scripts/fuzz.sh seed` runs it; the corpora are then minimised and
//! committed under fuzz/corpus/.

use std::path::Path;

use zcrx_capture::pcapfile::{Format, SaveFile};
use zcrx_flowcache::testdata::names;
use zcrx_flowcache::testdata::{tcp4_big, tcp6_jumbo, tcp6_with_ext, udp4, with_vlan};
use zcrx_ring::{Frame, SyntheticRing};

/// Ethernet frames: UDP/IPv4, TCP/IPv6 with extension headers, tagged, a later fragment, ARP.
fn ethernet_frames() -> Vec<Vec<u8>> {
    let a = [198, 18, 0, 1];
    let b = [198, 19, 0, 1];
    let mut v6a = [0u8; 16];
    v6a[..2].copy_from_slice(&[0x20, 0x01]);
    v6a[15] = 1;
    let mut v6b = v6a;
    v6b[15] = 2;
    let udp = udp4(a, b, 40000, 53, 32);
    let tcp = tcp6_with_ext(v6a, v6b, 443, 51000, 0x12);
    let mut frag = udp4(a, b, 1, 2, 64);
    frag[20] = 0x00; // flags/offset: a later fragment at offset 8*0x10
    frag[21] = 0x10;
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.resize(42, 0);
    vec![
        udp.clone(),
        tcp.clone(),
        with_vlan(&udp, 100),
        with_vlan(&with_vlan(&tcp, 7), 200),
        frag,
        arp,
        tcp4_big(a, b, 5201, 40000, 200),
        tcp6_jumbo(v6a, v6b, 5201, 40000, 100),
    ]
}

/// The frame re-framed for `linktype` (the IP packet after the Ethernet header).
fn reframe(eth: &[u8], linktype: u32) -> Vec<u8> {
    let ethertype = [eth[12], eth[13]];
    let ip = &eth[14..];
    let v6 = ethertype == [0x86, 0xdd];
    let mut f = Vec::new();
    match linktype {
        1 => return eth.to_vec(),
        113 => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6]);
            f.extend_from_slice(&eth[6..12]);
            f.extend_from_slice(&[0, 0]);
            f.extend_from_slice(&ethertype);
        }
        276 => {
            f.extend_from_slice(&ethertype);
            f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
            f.extend_from_slice(&eth[6..12]);
            f.extend_from_slice(&[0, 0]);
        }
        0 => f.extend_from_slice(&(if v6 { 10u32 } else { 2 }).to_ne_bytes()),
        108 => f.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        _ => {} // raw IP
    }
    f.extend_from_slice(ip);
    f
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn capture(format: Format, linktype: u32, snaplen: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut save = SaveFile::new(Vec::new(), format, linktype, snaplen);
    for (i, f) in frames.iter().enumerate() {
        let cut = &f[..f.len().min(snaplen as usize)];
        save.write(
            1_700_000_000_000_000_000 + i as u64 * 1000,
            f.len() as u32,
            cut,
            None,
        )
        .unwrap();
    }
    save.flush().unwrap();
    std::mem::take(save.get_mut())
}

/// Seeds of the `names_*` targets: ClientHellos (small, and post-quantum-sized) in one record
/// and split across records, a ServerHello, QUIC Initials of both versions (raw datagrams and
/// plaintext for the protecting mode), DNS messages over UDP and TCP, HTTP/1.x, and a
/// ClientHello's segments out of order for the reassembly.
fn names_seeds(root: &Path) {
    use zcrx_flowcache::names::quic::{VERSION_1, VERSION_2};
    let small = names::modern_client_hello("www.example.net", &["h2", "http/1.1"], 32);
    let big = names::modern_client_hello("pq.example.net", &["h2"], 1216);
    let tls = root.join("names_tls");
    write(&tls, "seed-small", &names::records(&small, 16_384));
    write(&tls, "seed-pq-split", &names::records(&big, 600));
    write(&tls, "seed-message", &small);
    write(
        &tls,
        "seed-server",
        &names::records(&names::server_hello(), 100),
    );
    let quic = root.join("names_quic");
    let dcid = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
    for (i, version) in [VERSION_1, VERSION_2].into_iter().enumerate() {
        let mut frames = names::crypto_frame(0, &small);
        frames.resize(1150, 0);
        let mut raw = vec![0u8];
        raw.extend(names::protect_initial(version, &dcid, 0, &frames));
        write(&quic, &format!("seed-raw-v{}", i + 1), &raw);
        let mut plain = vec![1 | (i as u8) << 1, dcid.len() as u8];
        plain.extend(dcid);
        plain.extend(names::crypto_frame(0, &small));
        plain.extend([0x02, 0x03, 0x00, 0x00, 0x00, 0x01]); // ACK, PING
        write(&quic, &format!("seed-plain-v{}", i + 1), &plain);
    }
    // RFC 9001 A.2's client Initial, as the specification protects it.
    let a2: String = include_str!("../flowcache/src/names/testdata/rfc9001-a2-client-initial.hex")
        .split_whitespace()
        .collect();
    let mut raw = vec![0u8];
    raw.extend(
        (0..a2.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&a2[i..i + 2], 16).unwrap()),
    );
    write(&quic, "seed-rfc9001-a2", &raw);
    let dns = root.join("names_dns");
    let query = [
        0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, b'w', b'w', b'w', 7, b'e', b'x', b'a', b'm',
        b'p', b'l', b'e', 3, b'n', b'e', b't', 0, 0, 1, 0, 1,
    ];
    let mut answer = query.to_vec();
    answer[2] = 0x81;
    answer[3] = 0x80;
    answer[7] = 1;
    answer.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 9]);
    write(&dns, "seed-query", &query);
    write(&dns, "seed-answer", &answer);
    let mut tcp = (answer.len() as u16).to_be_bytes().to_vec();
    tcp.extend(&answer);
    write(&dns, "seed-tcp", &tcp);
    let http = root.join("names_http");
    write(
        &http,
        "seed-request",
        b"GET /index.html?q=1 HTTP/1.1\r\nUser-Agent: x\r\nHost: www.example.net\r\n\r\n",
    );
    write(
        &http,
        "seed-response",
        b"HTTP/1.0 404 Not Found\r\nServer: x\r\n\r\n",
    );
    // Reassembly: the SYN's sequence number, then [offset+1024 (2 bytes), length, bytes].
    let stream = names::records(&big, 700);
    let mut seg = 0xffff_ff00u32.to_be_bytes().to_vec();
    for (off, len) in [
        (600usize, 255usize),
        (0, 255),
        (255, 255),
        (255, 100),
        (510, 255),
        (855, 255),
    ] {
        let end = (off + len).min(stream.len());
        seg.extend(((off + 1024) as u16).to_be_bytes());
        seg.push((end - off) as u8);
        seg.extend(&stream[off..end]);
    }
    write(&root.join("names_reassembly"), "seed-out-of-order", &seg);
    // zcap_offline (which feeds zcap's names book): a capture with a TLS handshake whose
    // ClientHello comes in two segments out of order, a QUIC Initial, DNS, HTTP.
    let (c, srv) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let hello = names::records(&small, 16_384);
    let frames = vec![
        ip4_frame(c, srv, 40000, 443, Some((0x02, 99)), &[]),
        ip4_frame(srv, c, 443, 40000, Some((0x12, 499)), &[]),
        ip4_frame(c, srv, 40000, 443, Some((0x18, 150)), &hello[50..]),
        ip4_frame(c, srv, 40000, 443, Some((0x18, 100)), &hello[..50]),
        ip4_frame(
            srv,
            c,
            443,
            40000,
            Some((0x18, 500)),
            &names::records(&names::server_hello(), 100),
        ),
        ip4_frame(c, srv, 40001, 443, None, &raw[1..]),
        ip4_frame(c, srv, 40002, 53, None, &query),
        ip4_frame(srv, c, 53, 40002, None, &answer),
        ip4_frame(
            c,
            srv,
            40003,
            80,
            Some((0x18, 1)),
            b"GET / HTTP/1.1\r\nHost: www.example.net\r\n\r\n",
        ),
        ip4_frame(
            srv,
            c,
            80,
            40003,
            Some((0x18, 1)),
            b"HTTP/1.1 200 OK\r\n\r\n",
        ),
    ];
    write(
        &root.join("zcap_offline"),
        "seed-names.pcap",
        &capture(Format::Pcap, 1, 262_144, &frames),
    );
}

/// An Ethernet/IPv4 frame: TCP with (flags, sequence number), or UDP; checksums left zero.
fn ip4_frame(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    tcp: Option<(u8, u32)>,
    payload: &[u8],
) -> Vec<u8> {
    let mut l4 = Vec::new();
    l4.extend(sport.to_be_bytes());
    l4.extend(dport.to_be_bytes());
    match tcp {
        Some((flags, seq)) => {
            l4.extend(seq.to_be_bytes());
            l4.extend([0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        }
        None => l4.extend([((8 + payload.len()) as u16).to_be_bytes(), [0, 0]].concat()),
    }
    l4.extend(payload);
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend([0x45, 0]);
    f.extend(((20 + l4.len()) as u16).to_be_bytes());
    f.extend([0, 1, 0x40, 0, 64, if tcp.is_some() { 6 } else { 17 }, 0, 0]);
    f.extend(src);
    f.extend(dst);
    f.extend(l4);
    f
}

/// IPFIX files from the encoder: records of every template kind without names, and with
/// the names of a TLS, a DNS and an HTTP flow (the names templates, strings of one and three
/// length bytes).
fn ipfix_seeds(root: &Path) {
    use std::net::{Ipv4Addr, Ipv6Addr};
    use zcrx_flowcache::ipfix::{Encoder, EncoderConfig};
    use zcrx_flowcache::names::FlowNames;
    use zcrx_flowcache::{Direction, EndReason, FlowKey, FlowRecord, FlowStats};
    let fwd = Direction::Forward;
    let mut tls = FlowNames::new();
    tls.tcp(fwd, 0, 0x02, &[], (50000, 443));
    let hello = names::modern_client_hello(&"a".repeat(300), &["h2", "http/1.1"], 32);
    tls.tcp(fwd, 1, 0x18, &names::records(&hello, 16_384), (50000, 443));
    let mut dns = FlowNames::new();
    let query = [
        0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'n', b'l', 0, 0, 1, 0, 1,
    ];
    dns.udp(fwd, &query, (40000, 53));
    let mut http = FlowNames::new();
    http.tcp(fwd, 0, 0x02, &[], (50001, 80));
    let request = b"GET / HTTP/1.1\r\nHost: www.example.com\r\n\r\n";
    http.tcp(fwd, 1, 0x18, request, (50001, 80));
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    let (a6, b6): (Ipv6Addr, Ipv6Addr) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    let keys = [
        (FlowKey::v4(a, b, 6, 50000, 443), Some(&tls)),
        (FlowKey::v6(a6, b6, 17, 40000, 53).with_vlan(7), Some(&dns)),
        (FlowKey::v4(a, b, 6, 50001, 80), Some(&http)),
        (FlowKey::v4(a, b, 1, 8, 0), None),
        (FlowKey::v6(a6, b6, 17, 5000, 5001), None),
    ];
    for (with_names, name) in [(false, "seed-plain"), (true, "seed-names")] {
        let mut enc = Encoder::new(EncoderConfig::default()).unwrap();
        let mut file = Vec::new();
        for (i, (key, names)) in keys.iter().enumerate() {
            let mut stats = FlowStats::default();
            stats.key = *key;
            stats.packets = [2, 1];
            stats.bytes = [120, 60];
            stats.first_ns = 1_700_000_000_000_000_000;
            stats.last_ns = stats.first_ns + 1_000_000;
            let r = FlowRecord {
                stats,
                end: EndReason::Idle,
            };
            let names = names.filter(|_| with_names).map(FlowNames::names);
            enc.encode_with_names(&r, None, names, i as u64, &mut |m| file.extend(m));
        }
        enc.flush(10, &mut |m| file.extend(m));
        write(&root.join("ipfix_decode"), name, &file);
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    names_seeds(&root);
    ipfix_seeds(&root);
    let eth = ethernet_frames();
    // extract: [link index, vlan-out-of-band flag, TCI hi, TCI lo, frame...]
    let links: [(u8, u32); 8] = [
        (0, 1),
        (1, 113),
        (2, 276),
        (3, 101),
        (4, 228),
        (5, 229),
        (6, 0),
        (7, 108),
    ];
    for (pick, linktype) in links {
        for (i, f) in eth.iter().enumerate() {
            if linktype == 229 && !(f.len() > 14 && f[12..14] == [0x86, 0xdd]) {
                continue;
            }
            let mut seed = vec![pick, (i % 2) as u8, 0x00, 0x64];
            seed.extend_from_slice(&reframe(f, linktype));
            write(
                &root.join("extract"),
                &format!("seed-{linktype}-{i}"),
                &seed,
            );
        }
    }
    // capture_file and zcap_offline: pcap and pcapng files.
    for linktype in [1u32, 113, 276, 101, 0] {
        let frames: Vec<Vec<u8>> = eth
            .iter()
            .filter(|f| linktype == 1 || f[12..14] != [0x08, 0x06])
            .map(|f| reframe(f, linktype))
            .collect();
        for (format, ext) in [(Format::Pcap, "pcap"), (Format::PcapNg, "pcapng")] {
            for snaplen in [262_144u32, 40] {
                let bytes = capture(format, linktype, snaplen, &frames);
                let name = format!("seed-{linktype}-{snaplen}.{ext}");
                write(&root.join("capture_file"), &name, &bytes);
                write(&root.join("zcap_offline"), &name, &bytes);
            }
        }
    }
    // block_walker: blocks the synthetic ring lays out as af_packet.c does.
    for (i, (frames, vlan)) in [(eth.clone(), false), (eth.clone(), true)]
        .into_iter()
        .enumerate()
    {
        let ring = SyntheticRing::builder()
            .block_size(4096)
            .snaplen(if i == 0 { 262_144 } else { 50 })
            .build(frames.into_iter().map(|f| {
                let mut fr = Frame::new(f);
                if vlan {
                    fr.vlan = Some((5, 0x8100));
                }
                fr
            }))
            .unwrap();
        let mut n = 0;
        while let Some(block) = ring.next_block() {
            let view = block.view().unwrap();
            write(
                &root.join("block_walker"),
                &format!("seed-{i}-{n}"),
                view.bytes(),
            );
            n += 1;
        }
    }
}
