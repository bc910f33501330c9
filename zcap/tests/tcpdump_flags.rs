//! tcpdump's other flags: `-d`/`-dd`/`-ddd` (with `-O`) print the compiled filter as tcpdump
//! does, `-L` and `-J` list the link and time stamp types as tcpdump does, `-K` drops `-v`'s checksum notes,
//! `--lengths` puts the lengths first, and `-I`, `-E`, `-T` are refused with their reason.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::{stderr, ZCAP};
use zcrx_ring::lab::Need;

fn out(tool: &str, args: &[&str]) -> std::process::Output {
    Command::new(tool)
        .env("TZ", "UTC")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn filter_listings_and_link_types_are_tcpdumps() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = common::tmp("flags.pcap");
    let frame = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 10);
    common::write_pcap(&path, [(Duration::new(1_700_000_000, 0), &frame[..])]);
    let p = path.to_str().unwrap();
    for expr in [
        "",
        "udp",
        "tcp port 80",
        "host 198.18.0.1 and not icmp",
        "vlan and udp",
    ] {
        for level in [&["-d"][..], &["-dd"], &["-ddd"], &["-d", "-O"]] {
            let mut args: Vec<&str> = level.to_vec();
            args.extend(["-r", p]);
            if !expr.is_empty() {
                args.push(expr);
            }
            let (t, z) = (out("tcpdump", &args), out(ZCAP, &args));
            assert!(z.status.success(), "{args:?}: {}", stderr(&z));
            assert_eq!(t.stdout, z.stdout, "{args:?}");
        }
    }
    // Without a source: compiled for Ethernet, as tcpdump's default device here.
    let z = out(ZCAP, &["-d", "udp"]);
    let t = out("tcpdump", &["-d", "-r", p, "udp"]);
    assert_eq!(t.stdout, z.stdout);
    for list in ["-L", "-J"] {
        let (t, z) = (
            out("tcpdump", &[list, "-i", "lo"]),
            out(ZCAP, &[list, "-i", "lo"]),
        );
        assert!(z.status.success(), "{list}");
        assert_eq!((t.stdout, t.stderr), (z.stdout, z.stderr), "{list}");
    }
}

#[test]
fn checksums_lengths_and_refusals() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = common::tmp("flags-k.pcap");
    let mut frame = zcrx_flowcache::testdata::udp4([198, 18, 0, 1], [198, 18, 0, 2], 1234, 53, 10);
    frame[24] ^= 0xff; // a bad IP header checksum
    common::write_pcap(&path, [(Duration::new(1_700_000_000, 0), &frame[..])]);
    let p = path.to_str().unwrap();
    for args in [&["-n", "-v", "-r", p][..], &["-n", "-vv", "-K", "-r", p]] {
        let (t, z) = (out("tcpdump", args), out(ZCAP, args));
        assert_eq!(
            String::from_utf8_lossy(&t.stdout),
            String::from_utf8_lossy(&z.stdout),
            "{args:?}"
        );
    }
    let z = out(ZCAP, &["-n", "--lengths", "-r", p]);
    let line = String::from_utf8_lossy(&z.stdout).into_owned();
    assert!(
        line.starts_with(&format!("caplen {0} len {0} ", frame.len())),
        "{line}"
    );
    for (args, why) in [
        (&["-I", "-i", "lo"][..], "monitor mode"),
        (&["-E", "x", "-r", p], "does not decrypt ESP"),
        (
            &["-T", "rpc", "-r", p],
            "chooses each packet's protocol by its ports",
        ),
        (&["-j", "adapter", "-i", "lo"], "the kernel's stamp only"),
        (&["-y", "FOO", "-i", "lo"], "offers EN10MB only"),
    ] {
        let z = out(ZCAP, args);
        assert!(!z.status.success(), "{args:?}");
        assert!(stderr(&z).contains(why), "{args:?}: {}", stderr(&z));
    }
}
