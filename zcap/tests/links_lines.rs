//! zcap's lines against tcpdump's on link layers and tunnels crafted by scapy
//! (`frames/links.py`): 802.1Q and QinQ, MPLS, PPPoE, 802.3 LLC/SNAP and STP, LLDP, ARP and
//! RARP, GRE, IP in IP, 6in4, VXLAN, Geneve, IPv6 extension headers and neighbour discovery,
//! SCTP — whole and cut by a snapshot length — at default, -v, -vv, -e and without -n; and
//! Linux cooked (SLL2, `-i any`) frames with `-e`.

use crate::common;

use std::process::Command;

use common::ZCAP;
use zcrx_ring::lab::Need;

/// Differences docs/zcap.md lists: a VLAN tag cut inside (tcpdump's `[|vlan]`), and a TCP
/// header cut behind an IPv6 routing header.
const KNOWN: [&str; 2] = ["[|vlan]", "RT6 ("];

#[test]
fn link_layers_and_tunnels_print_as_tcpdump_prints_them() {
    zcrx_ring::require!(Need::Tool("tcpdump"), Need::Tool("unshare"));
    if !zcrx_ring::lab::require_python("links_lines", &["scapy"]) {
        return;
    }
    let (path, cooked) = (common::tmp("links.pcap"), common::tmp("sll2.pcap"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/frames/links.py");
    let made = Command::new("python3")
        .arg(script)
        .arg(&path)
        .arg(&cooked)
        .status()
        .unwrap();
    assert!(made.success(), "frames/links.py");
    let mut failures = Vec::new();
    // `-i any`'s cooked frames (LINUX_SLL2): every packet identical.
    for flags in [
        &["-n"][..],
        &["-n", "-e"],
        &["-e", "-v"],
        &["-n", "-q", "-e"],
    ] {
        let (t, z) = (
            common::numbered_packets("tcpdump", &cooked, flags),
            common::numbered_packets(ZCAP, &cooked, flags),
        );
        assert_eq!(t.len(), 4, "{flags:?}");
        for (a, b) in t.iter().zip(&z).filter(|(a, b)| a != b) {
            failures.push(format!("SLL2 {flags:?}\ntcpdump: {a}\nzcap:    {b}"));
        }
    }
    for flags in [
        &["-n"][..],
        &["-n", "-v"],
        &["-n", "-vv"],
        &["-n", "-e"],
        &["-n", "-q"],
        &["-n", "-x"],
        &["-e"],
    ] {
        let (t, z) = (
            common::numbered_packets("tcpdump", &path, flags),
            common::numbered_packets(ZCAP, &path, flags),
        );
        assert!(t.len() > 100, "{flags:?}: {} packets", t.len());
        assert_eq!(t.len(), z.len(), "{flags:?}");
        let differ: Vec<_> = t.iter().zip(&z).filter(|(a, b)| a != b).collect();
        eprintln!(
            "{flags:?}: {} of {} identical",
            t.len() - differ.len(),
            t.len()
        );
        for (a, b) in differ {
            if !KNOWN.iter().any(|k| a.contains(k)) {
                failures.push(format!("{flags:?}\ntcpdump: {a}\nzcap:    {b}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
