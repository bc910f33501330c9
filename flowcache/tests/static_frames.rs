//! Static frames per link type and protocol, and every malformed case.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use zcrx_flowcache::testdata::{tcp6_with_ext, udp4, with_vlan};
use zcrx_flowcache::{extract, ExtractError, Fragment, Layer, LinkType};

const A4: [u8; 4] = [198, 18, 0, 1];
const B4: [u8; 4] = [198, 18, 0, 2];
const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

/// Ethernet / IPv4 / UDP 198.18.0.1:1234 -> 198.18.0.2:53, 4 payload bytes.
const ETH_UDP4: [u8; 46] = [
    0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, // ethernet
    0x45, 0x00, 0x00, 0x20, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 198, 18, 0, 1, 198, 18,
    0, 2, // ipv4
    0x04, 0xd2, 0x00, 0x35, 0x00, 0x0c, 0x00, 0x00, // udp
    1, 2, 3, 4,
];

fn ip4(a: [u8; 4]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

#[test]
fn ethernet_ipv4_udp() {
    let x = extract(LinkType::Ethernet, &ETH_UDP4, None).unwrap();
    assert_eq!((x.key.src(), x.key.dst()), (ip4(A4), ip4(B4)));
    assert_eq!(
        (x.key.proto(), x.key.sport(), x.key.dport()),
        (17, 1234, 53)
    );
    assert_eq!((x.l3_offset, x.l4_offset, x.payload_offset), (14, 34, 42));
    assert_eq!(x.fragment, Fragment::No);
    assert_eq!(x.key.vlan(), None);
    let built = udp4(A4, B4, 1234, 53, 4);
    assert_eq!(
        (&built[..24], &built[26..38]),
        (&ETH_UDP4[..24], &ETH_UDP4[26..38]),
        "builder agrees but for the checksum"
    );
}

#[test]
fn ethernet_padding_after_the_datagram_is_ignored() {
    let mut f = ETH_UDP4.to_vec();
    f.extend_from_slice(&[0; 14]);
    assert_eq!(
        extract(LinkType::Ethernet, &f, None).unwrap().key.dport(),
        53
    );
}

#[test]
fn ipv4_options_move_the_transport_header() {
    let mut f = ETH_UDP4[..34].to_vec();
    f[14] = 0x46; // IHL 6: one word of options
    f[17] = 0x24;
    f.extend_from_slice(&[1, 1, 1, 0]); // NOP NOP NOP EOL
    f.extend_from_slice(&ETH_UDP4[34..]);
    let x = extract(LinkType::Ethernet, &f, None).unwrap();
    assert_eq!((x.l4_offset, x.key.sport(), x.key.dport()), (38, 1234, 53));
}

#[test]
fn vlan_single_qinq_and_metadata() {
    let tagged = with_vlan(&ETH_UDP4, 0x2064); // PCP 1, VID 100
    assert_eq!(
        extract(LinkType::Ethernet, &tagged, None)
            .unwrap()
            .key
            .vlan(),
        Some(100)
    );
    // QinQ: 802.1ad outer 200, 802.1Q inner 100: the outer one identifies the flow.
    let mut qinq = with_vlan(&tagged, 200);
    qinq[12..14].copy_from_slice(&[0x88, 0xa8]);
    let x = extract(LinkType::Ethernet, &qinq, None).unwrap();
    assert_eq!(
        (x.key.vlan(), x.l3_offset, x.key.dport()),
        (Some(200), 22, 53)
    );
    // The kernel stripped the tag and reported it out of band.
    let x = extract(LinkType::Ethernet, &ETH_UDP4, Some(0x3007)).unwrap();
    assert_eq!(x.key.vlan(), Some(7));
    // Too deep a stack.
    let mut deep = ETH_UDP4.to_vec();
    for _ in 0..5 {
        deep = with_vlan(&deep, 1);
    }
    assert_eq!(
        extract(LinkType::Ethernet, &deep, None),
        Err(ExtractError::TooManyVlanTags)
    );
}

#[test]
fn linux_cooked_v1_and_v2() {
    let ip = &ETH_UDP4[14..];
    let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
    sll.extend_from_slice(ip);
    assert_eq!(
        extract(LinkType::LinuxSll, &sll, None).unwrap().key.dport(),
        53
    );
    let mut sll2 = vec![
        0x08, 0x00, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
    ];
    sll2.extend_from_slice(ip);
    let x = extract(LinkType::LinuxSll2, &sll2, None).unwrap();
    assert_eq!((x.l3_offset, x.key.sport()), (20, 1234));
    assert_eq!(
        extract(LinkType::LinuxSll2, &sll2[..19], None),
        Err(ExtractError::Truncated(Layer::Link))
    );
}

#[test]
fn raw_ip_and_bsd_loopback() {
    let ip = &ETH_UDP4[14..];
    assert_eq!(extract(LinkType::RawIp, ip, None).unwrap().key.dport(), 53);
    assert_eq!(extract(LinkType::Ipv4, ip, None).unwrap().key.dport(), 53);
    for fam in [[2, 0, 0, 0], [0, 0, 0, 2]] {
        let mut f = fam.to_vec();
        f.extend_from_slice(ip);
        assert_eq!(
            extract(LinkType::Null, &f, None).unwrap().key.dport(),
            53,
            "{fam:?}"
        );
    }
    let mut lo = vec![0, 0, 0, 2];
    lo.extend_from_slice(ip);
    assert_eq!(extract(LinkType::Loop, &lo, None).unwrap().key.dport(), 53);
    let v6 = &tcp6_with_ext(A6, B6, 1, 2, 0x02)[14..];
    let mut null6 = vec![30, 0, 0, 0];
    null6.extend_from_slice(v6);
    assert!(extract(LinkType::Null, &null6, None).unwrap().key.is_ipv6());
    assert_eq!(
        extract(LinkType::Null, &[7, 0, 0, 0, 0x45], None),
        Err(ExtractError::NotIp(7))
    );
    assert_eq!(
        extract(LinkType::RawIp, &[0x55], None),
        Err(ExtractError::BadVersion(5))
    );
    assert_eq!(
        extract(LinkType::Ipv6, ip, None),
        Err(ExtractError::BadVersion(4))
    );
}

#[test]
fn ipv6_extension_headers_tcp() {
    let f = tcp6_with_ext(A6, B6, 40000, 443, 0x12);
    let x = extract(LinkType::Ethernet, &f, None).unwrap();
    assert_eq!(x.key.src(), IpAddr::V6(Ipv6Addr::from(A6)));
    assert_eq!(
        (x.key.proto(), x.key.sport(), x.key.dport(), x.tcp_flags),
        (6, 40000, 443, 0x12)
    );
    assert_eq!(
        (x.l4_offset, x.payload_offset),
        (14 + 40 + 16, 14 + 40 + 16 + 20)
    );
}

fn v6_chain(headers: &[(u8, Vec<u8>)], last: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = vec![
        0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0,
    ];
    let body: usize = headers.iter().map(|(_, h)| h.len()).sum::<usize>() + l4.len();
    f.extend_from_slice(&(body as u16).to_be_bytes());
    f.push(headers.first().map(|h| h.0).unwrap_or(last));
    f.push(64);
    f.extend_from_slice(&A6);
    f.extend_from_slice(&B6);
    for (i, (_, h)) in headers.iter().enumerate() {
        let mut h = h.clone();
        h[0] = headers.get(i + 1).map(|n| n.0).unwrap_or(last);
        f.extend_from_slice(&h);
    }
    f.extend_from_slice(l4);
    f
}

const UDP_1_2: [u8; 8] = [0, 1, 0, 2, 0, 8, 0, 0];

#[test]
fn ipv6_routing_ah_mobility_esp_and_fragments() {
    let routing = (43, vec![0, 0, 0, 0, 0, 0, 0, 0]);
    let ah = (51, vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // payload len 1 -> (1+2)*4 = 12
    let mobility = (135, vec![0, 0, 0, 0, 0, 0, 0, 0]);
    let f = v6_chain(&[routing.clone(), ah.clone(), mobility], 17, &UDP_1_2);
    let x = extract(LinkType::Ethernet, &f, None).unwrap();
    assert_eq!((x.key.proto(), x.key.sport(), x.key.dport()), (17, 1, 2));
    // ESP ends the walk: no ports.
    let f = v6_chain(
        std::slice::from_ref(&routing),
        50,
        &[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1],
    );
    let x = extract(LinkType::Ethernet, &f, None).unwrap();
    assert_eq!((x.key.proto(), x.key.sport(), x.key.dport()), (50, 0, 0));
    // First fragment (offset 0, M=1): ports read, marked First.
    let first = (44, vec![0, 0, 0x00, 0x01, 0, 0, 0, 9]);
    let x = extract(LinkType::Ethernet, &v6_chain(&[first], 17, &UDP_1_2), None).unwrap();
    assert_eq!(
        (x.fragment, x.key.sport(), x.key.is_later_fragment()),
        (Fragment::First, 1, false)
    );
    // Later fragment (offset 8): the bytes after it look like ports, but must not be read.
    let later = (44, vec![0, 0, 0x00, 0x08, 0, 0, 0, 9]);
    let x = extract(LinkType::Ethernet, &v6_chain(&[later], 17, &UDP_1_2), None).unwrap();
    assert_eq!(
        (
            x.fragment,
            x.key.sport(),
            x.key.dport(),
            x.key.is_later_fragment()
        ),
        (Fragment::Later, 0, 0, true)
    );
    // Nine extension headers: refused.
    let many: Vec<_> = (0..9).map(|_| (60u8, vec![0u8; 8])).collect();
    assert_eq!(
        extract(LinkType::Ethernet, &v6_chain(&many, 17, &UDP_1_2), None),
        Err(ExtractError::TooManyExtensionHeaders)
    );
    // Extension header claiming more than the payload length.
    let mut f = v6_chain(&[routing], 17, &UDP_1_2);
    f[14 + 40 + 1] = 200;
    assert_eq!(
        extract(LinkType::Ethernet, &f, None),
        Err(ExtractError::BadTotalLength)
    );
    // Truncated inside an extension header.
    let f = v6_chain(&[ah], 17, &UDP_1_2);
    assert_eq!(
        extract(LinkType::Ethernet, &f[..14 + 40 + 4], None),
        Err(ExtractError::Truncated(Layer::Ipv6))
    );
}

#[test]
fn ipv4_fragments_only_first_yields_ports() {
    let mut first = ETH_UDP4;
    first[20] = 0x20; // MF, offset 0
    let x = extract(LinkType::Ethernet, &first, None).unwrap();
    assert_eq!((x.fragment, x.key.sport()), (Fragment::First, 1234));
    let mut later = ETH_UDP4;
    later[20] = 0x00;
    later[21] = 0x03; // offset 3 * 8: bytes at l4 are payload, not ports
    let x = extract(LinkType::Ethernet, &later, None).unwrap();
    assert_eq!(
        (x.fragment, x.key.sport(), x.key.dport()),
        (Fragment::Later, 0, 0)
    );
    assert!(x.key.is_later_fragment());
    assert_eq!(x.key.to_string(), "udp 198.18.0.1:0 > 198.18.0.2:0 frag");
}

#[test]
fn icmp_tcp_sctp_dccp_udplite() {
    let with_proto = |proto: u8, l4: &[u8]| {
        let mut f = ETH_UDP4[..34].to_vec();
        f[23] = proto;
        f[16..18].copy_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
        f.extend_from_slice(l4);
        f
    };
    let icmp = with_proto(1, &[8, 0, 0, 0, 0, 1, 0, 1]);
    let x = extract(LinkType::Ethernet, &icmp, None).unwrap();
    assert_eq!((x.key.sport(), x.key.dport()), (8, 0));
    let tcp = with_proto(
        6,
        &[
            0, 80, 0x1f, 0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0x60, 0x11, 0, 0, 0, 0, 0, 0, 2, 4, 5, 0xb4,
        ],
    );
    let x = extract(LinkType::Ethernet, &tcp, None).unwrap();
    assert_eq!(
        (x.key.sport(), x.key.dport(), x.tcp_flags, x.payload_offset),
        (80, 8080, 0x11, 34 + 24)
    );
    let sctp = with_proto(132, &[0x0b, 0x59, 0x0b, 0x59, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        extract(LinkType::Ethernet, &sctp, None)
            .unwrap()
            .key
            .sport(),
        2905
    );
    let dccp = with_proto(33, &[0x13, 0x88, 0x13, 0x89, 3, 0, 0, 0, 0, 0, 0, 0]);
    let x = extract(LinkType::Ethernet, &dccp, None).unwrap();
    assert_eq!((x.key.dport(), x.payload_offset), (5001, 34 + 12));
    let lite = with_proto(136, &[0, 7, 0, 9, 0, 8, 0, 0]);
    assert_eq!(
        extract(LinkType::Ethernet, &lite, None)
            .unwrap()
            .key
            .dport(),
        9
    );
    // Malformed transport headers.
    let bad_tcp = with_proto(
        6,
        &[
            0, 80, 0, 81, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
        ],
    );
    assert_eq!(
        extract(LinkType::Ethernet, &bad_tcp, None),
        Err(ExtractError::BadHeaderLength(Layer::Transport))
    );
    let bad_dccp = with_proto(33, &[0, 1, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        extract(LinkType::Ethernet, &bad_dccp, None),
        Err(ExtractError::BadHeaderLength(Layer::Transport))
    );
    // TCP options claimed but cut off.
    let cut = with_proto(
        6,
        &[
            0, 80, 0, 81, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0, 0, 0, 0, 0, 0, 0,
        ],
    );
    assert_eq!(
        extract(LinkType::Ethernet, &cut, None),
        Err(ExtractError::Truncated(Layer::Transport))
    );
    // Unknown protocol: key without ports, payload at the L4 offset.
    let gre = with_proto(47, &[0, 0, 0x08, 0x00]);
    let x = extract(LinkType::Ethernet, &gre, None).unwrap();
    assert_eq!(
        (x.key.proto(), x.key.sport(), x.payload_offset),
        (47, 0, 34)
    );
}

#[test]
fn malformed_ipv4() {
    let e = |f: &[u8]| extract(LinkType::Ethernet, f, None).unwrap_err();
    let mut f = ETH_UDP4;
    f[14] = 0x44;
    assert_eq!(e(&f), ExtractError::BadHeaderLength(Layer::Ipv4));
    let mut f = ETH_UDP4;
    f[14] = 0x65;
    assert_eq!(e(&f), ExtractError::BadVersion(6));
    let mut f = ETH_UDP4;
    f[16..18].copy_from_slice(&10u16.to_be_bytes());
    assert_eq!(e(&f), ExtractError::BadTotalLength);
    let mut f = ETH_UDP4;
    f[14] = 0x4f; // IHL 15 = 60 bytes, frame has fewer
    assert_eq!(e(&f), ExtractError::Truncated(Layer::Ipv4));
    // Total length that ends inside the UDP header.
    let mut f = ETH_UDP4;
    f[16..18].copy_from_slice(&24u16.to_be_bytes());
    assert_eq!(e(&f), ExtractError::Truncated(Layer::Transport));
    // Every prefix of a valid frame: an error or (once the UDP header is whole) the key.
    for n in 0..ETH_UDP4.len() {
        match extract(LinkType::Ethernet, &ETH_UDP4[..n], None) {
            Ok(x) => assert!(n >= 42 && x.key.dport() == 53),
            Err(ExtractError::Truncated(_)) => assert!(n < 42),
            Err(other) => panic!("prefix {n}: {other:?}"),
        }
    }
    // ARP is not IP.
    let mut arp = ETH_UDP4;
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(e(&arp), ExtractError::NotIp(0x0806));
    assert_eq!(e(&[]), ExtractError::Truncated(Layer::Link));
}

/// BIG TCP (Linux 6.3+, GSO sends above 64 KiB as a host captures them): IPv4 total length 0
/// means "the frame says how long": tcpdump (`ip_print`, presumed TSO) and Wireshark both
/// dissect such packets; so do we.
#[test]
fn ipv4_total_length_zero_takes_the_length_from_the_frame() {
    use zcrx_flowcache::testdata::tcp4_big;
    for payload in [0, 1000, 70_000, 180_000] {
        let f = tcp4_big([198, 18, 0, 1], [198, 19, 0, 1], 5201, 40000, payload);
        let x = extract(LinkType::Ethernet, &f, None).unwrap_or_else(|e| panic!("{payload}: {e}"));
        assert_eq!(x.key.proto(), 6);
        assert_eq!((x.key.sport(), x.key.dport()), (5201, 40000));
        assert_eq!(x.tcp_flags, 0x18);
        assert_eq!(x.payload_offset, 14 + 20 + 20);
    }
    // A total length 0 with the frame cut inside the TCP header is still truncated.
    let f = tcp4_big([198, 18, 0, 1], [198, 19, 0, 1], 1, 2, 0);
    assert_eq!(
        extract(LinkType::Ethernet, &f[..14 + 20 + 10], None),
        Err(ExtractError::Truncated(Layer::Transport))
    );
    // A non-zero total length below the header length is still an error.
    let mut bad = f.clone();
    bad[16..18].copy_from_slice(&10u16.to_be_bytes());
    assert_eq!(
        extract(LinkType::Ethernet, &bad, None),
        Err(ExtractError::BadTotalLength)
    );
}

/// IPv6 jumbograms (RFC 2675): payload length 0 and a Jumbo Payload hop-by-hop option.
#[test]
fn ipv6_jumbogram_uses_the_jumbo_payload_option() {
    use zcrx_flowcache::testdata::tcp6_jumbo;
    let mut a = [0u8; 16];
    a[..2].copy_from_slice(&[0x20, 0x01]);
    let mut b = a;
    a[15] = 1;
    b[15] = 2;
    for payload in [0, 70_000, 180_000] {
        let f = tcp6_jumbo(a, b, 443, 50000, payload);
        let x = extract(LinkType::Ethernet, &f, None).unwrap_or_else(|e| panic!("{payload}: {e}"));
        assert_eq!(x.key.proto(), 6);
        assert_eq!((x.key.sport(), x.key.dport()), (443, 50000));
        assert_eq!(x.l4_offset, 14 + 40 + 8);
    }
    // The jumbo length bounds the datagram: trailing bytes past it are not the datagram's,
    // and a jumbo length that ends inside the TCP header is a truncated datagram.
    let mut f = tcp6_jumbo(a, b, 443, 50000, 100_000);
    f[14 + 40 + 4..14 + 40 + 8].copy_from_slice(&(8u32 + 10).to_be_bytes());
    assert_eq!(
        extract(LinkType::Ethernet, &f, None),
        Err(ExtractError::Truncated(Layer::Transport))
    );
}
