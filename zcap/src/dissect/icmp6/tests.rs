use std::net::Ipv6Addr;

use super::*;

/// An IPv6 header (next header ICMPv6) and `msg`, with its checksum filled in.
fn frame(msg: &[u8]) -> Vec<u8> {
    let mut d = vec![0x60, 0, 0, 0];
    d.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    d.extend_from_slice(&[58, 255]);
    d.extend_from_slice(&"fe80::1".parse::<Ipv6Addr>().unwrap().octets());
    d.extend_from_slice(&"ff02::1".parse::<Ipv6Addr>().unwrap().octets());
    d.extend_from_slice(msg);
    if msg.len() >= 4 {
        let sum = v6_sum(&d, 0, 40, msg.len(), 58).unwrap();
        d[42..44].copy_from_slice(&sum.to_be_bytes());
    }
    d
}

fn show(msg: &[u8], verbose: u8) -> (String, bool) {
    let d = frame(msg);
    let style = Style {
        verbose,
        ..Style::default()
    };
    icmp6(&d, 0, 40, msg.len(), style)
}

fn addr(a: &str) -> [u8; 16] {
    a.parse::<Ipv6Addr>().unwrap().octets()
}

fn mldv2_report() -> Vec<u8> {
    let mut m = vec![143, 0, 0, 0, 0, 0, 0, 2];
    m.extend_from_slice(&[4, 0, 0, 0]);
    m.extend_from_slice(&addr("ff02::1:ff00:2"));
    m.extend_from_slice(&[1, 0, 0, 1]);
    m.extend_from_slice(&addr("ff05::2"));
    m.extend_from_slice(&addr("fd00::9"));
    m
}

#[test]
fn mldv2_reports_count_and_list_their_records() {
    let m = mldv2_report();
    assert_eq!(
        show(&m, 0).0,
        "ICMP6, multicast listener report v2, 2 group record(s), length 64"
    );
    assert_eq!(
        show(&m, 1).0,
        "[icmp6 sum ok] ICMP6, multicast listener report v2, 2 group record(s) \
         [gaddr ff02::1:ff00:2 to_ex, 0 source(s)] [gaddr ff05::2 is_in, 1 source(s)]"
    );
    assert!(show(&m, 2)
        .0
        .ends_with("[gaddr ff02::1:ff00:2 to_ex { }] [gaddr ff05::2 is_in { fd00::9 }]"));
}

#[test]
fn unreachable_port_walks_extension_headers() {
    let mut m = vec![1, 4, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&[0x60, 0, 0, 0, 0, 24, 0, 64]);
    m.extend_from_slice(&addr("fd00:5a::1"));
    m.extend_from_slice(&addr("fd00:5a::2"));
    // Hop-by-hop, then destination options, then UDP.
    m.extend_from_slice(&[60, 0, 1, 4, 0, 0, 0, 0]);
    m.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]);
    m.extend_from_slice(&[0x9c, 0x40, 0x27, 0x0f, 0, 8, 0, 0]);
    assert_eq!(
        show(&m, 0).0,
        "ICMP6, destination unreachable, unreachable port, fd00:5a::2 udp port 9999, length 72"
    );
    // An upper layer it cannot reach: the mark, no jump.
    m[8 + 40 + 8] = 58;
    assert_eq!(
        show(&m, 0),
        (
            "ICMP6, destination unreachable, unreachable port [|icmp6]".into(),
            false
        )
    );
}

#[test]
fn neighbor_discovery_lists_options() {
    let mut m = vec![135, 0, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&addr("fd00:5a::2"));
    m.extend_from_slice(&[1, 1, 2, 0, 0, 0, 0, 1]);
    assert_eq!(
        show(&m, 1).0,
        "[icmp6 sum ok] ICMP6, neighbor solicitation, length 32, who has fd00:5a::2\n\t  \
         source link-address option (1), length 8 (1): 02:00:00:00:00:01"
    );
    let mut ra = vec![134, 0, 0, 0, 64, 0x88, 7, 8, 0, 0, 0, 1, 0, 0, 0, 2];
    ra.extend_from_slice(&[5, 1, 0, 0, 0, 0, 5, 220]);
    ra.extend_from_slice(&[3, 4, 64, 0xc0, 255, 255, 255, 255, 0, 0, 0, 9, 0, 0, 0, 0]);
    ra.extend_from_slice(&addr("fd00:1::"));
    let text = show(&ra, 1).0;
    assert!(text.contains(
        "\n\thop limit 64, Flags [managed], pref high, router lifetime 1800s, \
         reachable time 1ms, retrans timer 2ms\n\t  mtu option (5), length 8 (1):  1500\n\t  \
         prefix info option (3), length 32 (4): fd00:1::/64, Flags [onlink, auto], \
         valid time infinity, pref. time 9s"
    ));
}

#[test]
fn cut_messages_jump_or_mark() {
    let m = mldv2_report();
    let d = frame(&m);
    for cut in 40..d.len() {
        let _ = icmp6(&d[..cut], 0, 40, m.len(), Style::default());
    }
    let (text, jumped) = icmp6(
        &d[..40 + 20],
        0,
        40,
        m.len(),
        Style {
            verbose: 1,
            ..Style::default()
        },
    );
    assert_eq!(
        (text.as_str(), jumped),
        (
            "ICMP6, multicast listener report v2, 2 group record(s) [|icmp6]",
            true
        )
    );
    assert_eq!(show(&[], 0).0, "ICMP6, length 0 (invalid)");
}
