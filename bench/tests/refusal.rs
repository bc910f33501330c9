//! A receive mode the kernel refuses is reported as skipped with the kernel's reason, never
//! faked, and the run goes on: io_uring switched off with `kernel.io_uring_disabled = 2`.
//! (Its own test binary: cargo runs test binaries one after another, so no other rxbench test
//! sees io_uring switched off.) Under `CI=true` a skip is a failure.

mod common;

use std::ffi::OsStr;

const KNOB: &str = "/proc/sys/kernel/io_uring_disabled";

/// Restores the knob however the test ends.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(KNOB, &self.0);
    }
}

#[test]
fn io_uring_switched_off_is_skipped_with_the_reason_and_the_run_goes_on() {
    zcrx_ring::require!();
    let before = std::fs::read_to_string(KNOB)
        .expect("kernel.io_uring_disabled exists (Linux 6.6 or later)")
        .trim()
        .to_string();
    let _restore = Restore(before);
    std::fs::write(KNOB, "2").expect("switch io_uring off");
    let json = common::scratch("refusal").with_extension("json");
    let out = common::rxbench(&[
        OsStr::new("--quick"),
        OsStr::new("--modes"),
        OsStr::new("baseline-tx,sockets-io-uring,ring-zerocopy"),
        OsStr::new("--json"),
        json.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run goes on: {stderr}");
    assert!(
        stderr.contains("sockets-io-uring: skipped: ")
            && stderr.contains(
                "io_uring: io_uring_setup failed (needs Linux 6.0 or later with io_uring enabled)"
            ),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("skipped sockets-io-uring (64 B, 256 flows)"),
        "{stdout}"
    );
    let report = common::read_report(&json);
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["mode"], "sockets-io-uring");
    assert!(skipped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("Operation not permitted"));
    let modes: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mode"].as_str().unwrap())
        .collect();
    assert_eq!(
        modes,
        ["baseline-tx", "ring-zerocopy"],
        "no result for the refused mode"
    );
    let _ = std::fs::remove_file(&json);
}

#[test]
fn cpu_dma_latency_outside_a_latency_run_is_refused_before_any_traffic() {
    common::refused(
        &["sniff", "--cpu-dma-latency", "0", "--repeat", "1"],
        "--cpu-dma-latency applies to --latency runs",
    );
    // No sniffer ran: each run says so on standard error as it starts.
    let out = common::rxbench(&["sniff", "--cpu-dma-latency", "0", "--repeat", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(", run 1"), "{err}");
}
