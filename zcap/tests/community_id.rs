//! `--flows --json`'s `community_id` against the specification's reference implementation
//! (the `communityid` Python package, scripts/deps.sh), string for string, for every flow of
//! a capture of every shape (TCP, UDP, SCTP, ICMP echo both ways, ICMPv6 neighbour discovery
//! both ways and a one-way error, IPv6, VLAN, a later fragment, GRE) and of every capture of
//! the zcap_offline and capture_file fuzz corpora, with the default seed and `--community-id-seed`; and the
//! seed's refusals. Without python3 or the package the comparison is skipped with a message,
//! and fails under CI=true.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{bin, stderr};
use serde_json::Value;

/// The reference's IDs of (seed, flow object) in order; `None` when it is not installed and
/// `zcap -r input --flows --json [--community-id-seed seed]`'s flow objects.
fn flows(input: &Path, seed: Option<u16>) -> Vec<Value> {
    let mut args = vec![
        "-r".to_string(),
        input.to_str().unwrap().to_string(),
        "--flows".into(),
        "--json".into(),
    ];
    if let Some(s) = seed {
        args.extend(["--community-id-seed".into(), s.to_string()]);
    }
    let o = Command::new(bin()).args(&args).output().unwrap();
    assert!(o.status.success(), "{input:?}: {}", stderr(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Frames of every shape, both directions where the protocol has two.
fn frames() -> Vec<Vec<u8>> {
    use etherparse::{Icmpv6Type, PacketBuilder};
    let (ma, mb) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let (a, b) = ([198, 18, 0, 9], [198, 18, 0, 2]);
    let (a6, b6) = (
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10],
        [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    );
    let mut v = Vec::new();
    let mut push = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        f(&mut out);
        v.push(out);
    };
    push(&|o| {
        PacketBuilder::ethernet2(ma, mb)
            .ipv4(a, b, 64)
            .tcp(40000, 80, 1, 1000)
            .syn()
            .write(o, &[])
            .unwrap()
    });
    push(&|o| {
        PacketBuilder::ethernet2(mb, ma)
            .ipv4(b, a, 64)
            .tcp(80, 40000, 7, 1000)
            .syn()
            .ack(2)
            .write(o, &[])
            .unwrap()
    });
    push(&|o| {
        PacketBuilder::ethernet2(ma, mb)
            .ipv4(a, b, 64)
            .udp(5353, 53)
            .write(o, b"question")
            .unwrap()
    });
    push(&|o| {
        PacketBuilder::ethernet2(ma, mb)
            .ipv4(a, b, 64)
            .icmpv4_echo_request(7, 1)
            .write(o, b"ping")
            .unwrap()
    });
    push(&|o| {
        PacketBuilder::ethernet2(mb, ma)
            .ipv4(b, a, 64)
            .icmpv4_echo_reply(7, 1)
            .write(o, b"ping")
            .unwrap()
    });
    // Neighbour solicitation and advertisement, then a destination unreachable (port).
    for (forward, type_u8, code_u8) in [(true, 135, 0), (false, 136, 0), (false, 1, 4)] {
        let (src, dst, s6, d6) = if forward {
            (ma, mb, a6, b6)
        } else {
            (mb, ma, b6, a6)
        };
        push(&|o| {
            PacketBuilder::ethernet2(src, dst)
                .ipv6(s6, d6, 64)
                .icmpv6(Icmpv6Type::Unknown {
                    type_u8,
                    code_u8,
                    bytes5to8: [0; 4],
                })
                .write(o, &[0; 16])
                .unwrap()
        });
    }
    push(&|o| {
        PacketBuilder::ethernet2(ma, mb)
            .ipv6(a6, b6, 64)
            .tcp(50000, 443, 1, 1000)
            .syn()
            .write(o, &[])
            .unwrap()
    });
    push(&|o| {
        PacketBuilder::ethernet2(ma, mb)
            .single_vlan(etherparse::VlanId::try_new(42).unwrap())
            .ipv4([198, 18, 0, 3], [198, 18, 0, 4], 64)
            .udp(6000, 6001)
            .write(o, b"x")
            .unwrap()
    });
    let udp = v[2].clone();
    // SCTP (132) and GRE (47): the UDP frame with its protocol byte changed.
    for proto in [132, 47] {
        let mut f = udp.clone();
        f[23] = proto;
        v.push(f);
    }
    // A later fragment of the UDP datagram.
    let mut later = udp;
    later[20] = 0;
    later[21] = 13;
    v.push(later);
    v
}

#[test]
fn flow_ids_equal_the_reference() {
    let d = common::tmp("community-id");
    std::fs::create_dir_all(&d).unwrap();
    let input = d.join("shapes.pcap");
    let frames = frames();
    common::write_pcap(
        &input,
        frames
            .iter()
            .enumerate()
            .map(|(i, f)| (std::time::Duration::from_millis(1000 + i as u64), &f[..])),
    );
    let mut all: Vec<(u16, Value)> = Vec::new();
    let shapes = flows(&input, None);
    let protos: std::collections::BTreeSet<u64> = shapes
        .iter()
        .map(|f| f["proto"].as_u64().unwrap())
        .collect();
    assert_eq!(
        protos.into_iter().collect::<Vec<_>>(),
        [1, 6, 17, 47, 58, 132]
    );
    // The echo request and reply are two flows of one ID; so are the neighbour solicitation
    // and advertisement.
    for ty in [(1, 8, 0), (58, 135, 136)] {
        let ids: Vec<&Value> = shapes
            .iter()
            .filter(|f| f["proto"] == ty.0 && (f["icmp_type"] == ty.1 || f["icmp_type"] == ty.2))
            .map(|f| &f["community_id"])
            .collect();
        assert_eq!(ids.len(), 2, "{shapes:?}");
        assert_eq!(ids[0], ids[1]);
    }
    all.extend(shapes.into_iter().map(|f| (0, f)));
    all.extend(flows(&input, Some(65535)).into_iter().map(|f| (65535, f)));
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut files = 0;
    let paths = ["zcap_offline", "capture_file"]
        .iter()
        .flat_map(|d| std::fs::read_dir(corpus.join(d)).unwrap())
        .map(|e| e.unwrap().path());
    for path in paths {
        // zcap refuses what is not a capture; the comparison is over what it reads.
        let o = Command::new(bin())
            .args([
                "-r",
                path.to_str().unwrap(),
                "--flows",
                "--json",
                "--community-id-seed",
                "7",
            ])
            .output()
            .unwrap();
        if !o.status.success() {
            continue;
        }
        files += 1;
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            if v.get("community_id").is_some() {
                all.push((7, v));
            }
        }
    }
    assert!(files > 50, "{files} corpus captures read");
    let refs: Vec<(u16, &Value)> = all.iter().map(|(seed, v)| (*seed, v)).collect();
    let Some(want) = common::reference_community_ids("community_id_oracle", &refs) else {
        return;
    };
    for ((seed, f), want) in all.iter().zip(&want) {
        assert_eq!(
            f["community_id"].as_str(),
            Some(want.as_str()),
            "seed {seed}: {f}"
        );
    }
    eprintln!(
        "community_id: {} flows' IDs (a capture of every shape with seeds 0 and 65535, the {files} \
         captures zcap reads of the fuzz corpora with seed 7) equal the reference's",
        want.len()
    );
}

#[test]
fn bad_seeds_are_refused() {
    for (seed, says) in [
        (
            "65536",
            "--community-id-seed 65536: the seed is 16 bits, 0..=65535",
        ),
        ("x", "--community-id-seed"),
    ] {
        let o = Command::new(bin())
            .args([
                "-r",
                "/nonexistent.pcap",
                "--flows",
                "--community-id-seed",
                seed,
            ])
            .output()
            .unwrap();
        assert!(!o.status.success());
        assert!(stderr(&o).contains(says), "{seed}: {}", stderr(&o));
    }
}
