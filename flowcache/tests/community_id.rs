//! `FlowKey::community_id` against the specification's reference implementation, the
//! `communityid` Python package (installed by scripts/deps.sh), string for string: every key
//! of every frame of the repository's test captures (the fuzz corpora's pcap, pcapng and
//! extraction inputs), frames built here (VLAN-tagged, later fragments, ICMP and ICMPv6 of
//! every type, SCTP, IPv6 with extension headers) and generated keys of every protocol, both
//! ways, with three seeds. Without python3 or the package the test is skipped with a message,
//! and fails under CI=true.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use zcrx_flowcache::testdata::{tcp4_big, tcp6_jumbo, tcp6_with_ext, udp4, with_vlan};
use zcrx_flowcache::{extract, FlowKey, FlowTable, LinkType};

const SEEDS: [u16; 3] = [0, 1, 0xffff];

/// The reference's IDs for `keys` with `seed`s, in order; `None` (after saying why) when the
/// reference is not installed and CI is not set.
fn reference(inputs: &[(u16, FlowKey)]) -> Option<Vec<String>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/community_id.py");
    if !zcrx_ring::lab::require_python("community_id_oracle", &["communityid"]) {
        return None;
    }
    let mut lines = String::new();
    for (seed, k) in inputs {
        lines += &format!(
            "{seed} {} {} {} {} {}\n",
            k.proto(),
            k.src(),
            k.dst(),
            k.sport(),
            k.dport()
        );
    }
    let ids = zcrx_ring::lab::oracle_lines("python3", &[script], lines);
    assert_eq!(ids.len(), inputs.len());
    Some(ids)
}

/// Compares every key with every seed against the reference; returns how many IDs matched.
fn compare(keys: &BTreeSet<FlowKey>) -> Option<usize> {
    let inputs: Vec<(u16, FlowKey)> = keys.iter().flat_map(|k| SEEDS.map(|s| (s, *k))).collect();
    let want = reference(&inputs)?;
    for ((seed, k), want) in inputs.iter().zip(&want) {
        assert_eq!(&k.community_id(*seed).to_string(), want, "{k} seed {seed}");
    }
    Some(want.len())
}

/// The link types of the extraction fuzz target, in its order (its input's byte 0).
const FUZZ_LINKS: [LinkType; 8] = [
    LinkType::Ethernet,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::RawIp,
    LinkType::Ipv4,
    LinkType::Ipv6,
    LinkType::Null,
    LinkType::Loop,
];

/// Every (link type, frame) of a pcap or pcapng file, up to its first error.
fn capture_frames(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut frames = Vec::new();
    if let Ok(mut r) = pcap_file::pcap::PcapReader::new(bytes) {
        let link = u32::from(r.header().datalink);
        while let Some(Ok(p)) = r.next_packet() {
            frames.push((link, p.data.into_owned()));
        }
    } else if let Ok(mut r) = pcap_file::pcapng::PcapNgReader::new(bytes) {
        use pcap_file::pcapng::Block;
        let mut links = Vec::new();
        while let Some(Ok(b)) = r.next_block() {
            match b {
                Block::InterfaceDescription(i) => links.push(u32::from(i.linktype)),
                Block::EnhancedPacket(p) => {
                    if let Some(l) = links.get(p.interface_id as usize) {
                        frames.push((*l, p.data.into_owned()));
                    }
                }
                Block::SimplePacket(p) => {
                    if let Some(l) = links.first() {
                        frames.push((*l, p.data.into_owned()));
                    }
                }
                _ => {}
            }
        }
    }
    frames
}

/// The keys of every frame of the fuzz corpora: the pcap and pcapng files of `capture_file`
/// and `zcap_offline`, the framed inputs of `extract`.
fn corpus_keys() -> (BTreeSet<FlowKey>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut keys = BTreeSet::new();
    let mut frames = 0;
    for dir in ["capture_file", "zcap_offline"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            for (link, f) in capture_frames(&bytes) {
                let Some(link) = LinkType::from_linktype(link) else {
                    continue;
                };
                if let Ok(x) = extract(link, &f, None) {
                    keys.insert(x.key);
                    frames += 1;
                }
            }
        }
    }
    for e in std::fs::read_dir(root.join("extract")).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        let [pick, vlan_on, t0, t1, frame @ ..] = &data[..] else {
            continue;
        };
        let link = FUZZ_LINKS[usize::from(*pick) % FUZZ_LINKS.len()];
        let vlan = (vlan_on & 1 == 1).then(|| u16::from_be_bytes([*t0, *t1]));
        if let Ok(x) = extract(link, frame, vlan) {
            keys.insert(x.key);
            frames += 1;
        }
    }
    (keys, frames)
}

#[test]
fn every_key_of_the_test_captures_matches_the_reference() {
    let (keys, frames) = corpus_keys();
    assert!(frames > 400, "only {frames} frames read from the corpora");
    let protos: BTreeSet<u8> = keys.iter().map(|k| k.proto()).collect();
    for p in [1, 6, 17, 58] {
        assert!(
            protos.contains(&p),
            "no protocol {p} in the corpora: {protos:?}"
        );
    }
    if let Some(n) = compare(&keys) {
        eprintln!(
            "community_id: {n} IDs of {} keys from {frames} corpus frames equal the reference's",
            keys.len()
        );
    }
}

/// An IPv4 frame with protocol `proto` and `l4` after its header (no options).
fn ip4_frame(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8], frag: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let len = (20 + l4.len()) as u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&len.to_be_bytes());
    f.extend_from_slice(&[0, 1]);
    f.extend_from_slice(&frag.to_be_bytes());
    f.extend_from_slice(&[64, proto, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(l4);
    f
}

/// An IPv6 frame with next header `proto` and `l4` after the fixed header.
fn ip6_frame(src: [u8; 16], dst: [u8; 16], proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    f.extend_from_slice(&[proto, 64]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(l4);
    f
}

/// Frames of every shape the key records: each protocol both ways, ICMP and ICMPv6 of every
/// type, VLAN tags, later fragments, IPv6 extension headers and jumbograms.
fn built_frames() -> Vec<Vec<u8>> {
    let (a, b) = ([198, 18, 0, 1], [198, 19, 7, 9]);
    let mut a6 = [0u8; 16];
    a6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a6[15] = 1;
    let mut b6 = a6;
    b6[15] = 2;
    b6[8] = 0xff;
    let mut frames = Vec::new();
    for (s, d, s6, d6) in [(a, b, a6, b6), (b, a, b6, a6), (a, a, a6, a6)] {
        frames.push(udp4(s, d, 40000, 53, 20));
        frames.push(udp4(s, d, 53, 53, 20));
        frames.push(tcp4_big(s, d, 5201, 40000, 100));
        frames.push(tcp6_with_ext(s6, d6, 443, 51000, 0x12));
        frames.push(tcp6_jumbo(s6, d6, 5201, 40000, 100));
        // SCTP, UDP-Lite, DCCP (a minimal header: data offset 3), GRE, ESP.
        let ports = [0x9c, 0x40, 0x0b, 0x59, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut dccp = ports.to_vec();
        dccp[4] = 3;
        dccp[8] = 0x01 << 1; // type 1 (request), X = 0
        dccp.resize(16, 0);
        for (proto, l4) in [
            (132, &ports[..12]),
            (136, &ports[..8]),
            (33, &dccp[..]),
            (47, &ports[..4]),
            (50, &ports[..8]),
        ] {
            frames.push(ip4_frame(s, d, proto, l4, 0));
            frames.push(ip6_frame(s6, d6, proto, l4));
        }
        for ty in 0..=255u8 {
            for code in [0, 3] {
                let icmp = [ty, code, 0, 0, 0, 7, 0, 1];
                frames.push(ip4_frame(s, d, 1, &icmp, 0));
                frames.push(ip6_frame(s6, d6, 58, &icmp));
            }
        }
        // Later fragments (offset 8 x 185), of TCP, UDP, ICMP; the first one too.
        for proto in [1, 6, 17] {
            frames.push(ip4_frame(s, d, proto, &[0; 20], 185));
            let mut first = [
                8, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0,
            ];
            first[0] = if proto == 1 { 8 } else { 0x9c };
            frames.push(ip4_frame(s, d, proto, &first, 0x2000));
        }
    }
    let tagged: Vec<Vec<u8>> = frames.iter().map(|f| with_vlan(f, 42)).collect();
    frames.extend(tagged);
    frames
}

#[test]
fn built_frames_and_their_flows_match_the_reference() {
    let mut keys = BTreeSet::new();
    let mut table = FlowTable::with_capacity(1 << 14).unwrap();
    let mut records = Vec::new();
    for (i, f) in built_frames().iter().enumerate() {
        let x = extract(LinkType::Ethernet, f, None).unwrap_or_else(|e| panic!("frame {i}: {e}"));
        keys.insert(x.key);
        let t = table.track(x.track_input(x.ip_octets(f.len() as u32), i as u64));
        if t.evicted {
            records.extend(table.drain_evicted());
        }
    }
    records.extend(table.flush());
    // Each flow's ID (from its oriented key) is its first packet's key's.
    let firsts: BTreeSet<FlowKey> = records.iter().map(|r| r.stats.oriented().key).collect();
    for r in &records {
        assert_eq!(
            r.stats.community_id(7),
            r.stats.oriented().key.community_id(7)
        );
    }
    assert!(firsts.is_subset(&keys));
    let vlan = keys.iter().filter(|k| k.vlan().is_some()).count();
    let later = keys.iter().filter(|k| k.is_later_fragment()).count();
    assert!(vlan > 0 && later > 0);
    // The VLAN id is not hashed.
    for k in keys.iter().filter(|k| k.vlan().is_some()) {
        let untagged = match (k.src(), k.dst()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => FlowKey::v4(s, d, k.proto(), k.sport(), k.dport()),
            (IpAddr::V6(s), IpAddr::V6(d)) => FlowKey::v6(s, d, k.proto(), k.sport(), k.dport()),
            _ => unreachable!(),
        };
        if !k.is_later_fragment() {
            assert_eq!(k.community_id(0), untagged.community_id(0));
        }
    }
    if let Some(n) = compare(&keys) {
        eprintln!(
            "community_id: {n} IDs of {} keys from built frames ({vlan} tagged, {later} later \
             fragments, {} flows) equal the reference's",
            keys.len(),
            records.len()
        );
    }
}

/// Generated keys: every protocol number with ports, both ways, addresses ordered either way
/// or equal, equal ports; random IPv4 and IPv6 addresses and ports.
#[test]
fn generated_keys_match_the_reference() {
    let mut keys = BTreeSet::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for proto in 0..=255u8 {
        for _ in 0..4 {
            let (r1, r2) = (next(), next());
            let (s4, d4) = (
                Ipv4Addr::from_bits(r1 as u32),
                Ipv4Addr::from_bits(r2 as u32),
            );
            let (s6, d6) = (
                Ipv6Addr::from_bits(u128::from(r1) << 64 | u128::from(r2)),
                Ipv6Addr::from_bits(u128::from(r2) << 64 | u128::from(r1)),
            );
            let (p, q) = ((r1 >> 40) as u16, (r2 >> 40) as u16);
            // ICMP types and codes fit a byte.
            let (p, q) = if matches!(proto, 1 | 58) {
                (p & 0xff, q & 0xff)
            } else {
                (p, q)
            };
            for k in [
                FlowKey::v4(s4, d4, proto, p, q),
                FlowKey::v4(s4, s4, proto, p, q),
                FlowKey::v4(s4, s4, proto, p, p),
                FlowKey::v6(s6, d6, proto, p, q),
                FlowKey::v6(s6, s6, proto, p, q),
            ] {
                keys.insert(k);
                keys.insert(k.reversed());
            }
        }
    }
    // Every ICMP and ICMPv6 type with two codes, both ways.
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    let (a6, b6) = (Ipv6Addr::LOCALHOST, "2001:db8::1".parse().unwrap());
    for ty in 0..=255u16 {
        for code in [0, 1] {
            for k in [
                FlowKey::v4(a, b, 1, ty, code),
                FlowKey::v4(b, a, 1, ty, code),
                FlowKey::v6(a6, b6, 58, ty, code),
                FlowKey::v6(b6, a6, 58, ty, code),
            ] {
                keys.insert(k);
            }
        }
    }
    if let Some(n) = compare(&keys) {
        eprintln!(
            "community_id: {n} IDs of {} generated keys equal the reference's",
            keys.len()
        );
    }
}
