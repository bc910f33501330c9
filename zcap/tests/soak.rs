//! The soak's short form (`scripts/soak.sh --seconds 60`): the whole sensor — rotation, gzip
//! hooks, flows and IPFIX, metrics scraped by Prometheus over TLS with basic auth, a
//! PCAP-over-IP client over mutual TLS, hostile clients every 20 s — against steady lab
//! traffic for a minute; the script checks that memory, descriptors, threads and processes
//! stay within their bounds, that nothing is dropped, that every file reads whole, that every
//! scrape succeeded and that the client got every packet. Fails under CI=true instead of
//! skipping.

use crate::common;

use std::process::Command;

#[test]
fn a_one_minute_soak_stays_flat_and_loses_nothing() {
    zcrx_ring::require!();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/soak.sh");
    let o = Command::new(script)
        .args([
            "--seconds",
            "60",
            "--every",
            "5",
            "--pps",
            "5000",
            "--hostile-every",
            "20",
            "--zcap",
            common::ZCAP,
        ])
        .output()
        .expect("run scripts/soak.sh");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.contains("FAIL"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok:")).count(),
        14,
        "{out}"
    );
}
