//! What the rxbench test binaries share: running rxbench, reading its report and checking it
//! against `report.schema.json`, and a scratch path per process.
// Each test binary uses some of these, not all.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// rxbench run with `args`, its output collected.
pub fn rxbench<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxbench"))
        .args(args)
        .output()
        .expect("run rxbench")
}

/// rxbench run with `args`; it must succeed (the failure shows its arguments and standard
/// error). Returns its standard output.
pub fn rxbench_ok<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let out = rxbench(args);
    assert!(
        out.status.success(),
        "rxbench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// rxbench with `args` is refused once running (exit status 1), and its standard error says
/// `says`.
pub fn refused(args: &[&str], says: &str) {
    let out = rxbench(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
}

/// clap refuses `args` as a usage error (exit status 2): its message is about `arg` (a
/// flag such as `--rounds`, or a positional's `<NAME>`) and says each of `says` (the range,
/// or the bad value).
pub fn usage_error(args: &[&str], arg: &str, says: &[&str]) {
    let out = rxbench(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(&format!(" for '{arg}")), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?} does not say {s:?}: {err}");
    }
}

/// The report rxbench wrote to `path`, checked against the schema.
pub fn read_report(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    validate(&report);
    report
}

/// `report` matches `bench/report.schema.json` (every violation listed otherwise).
pub fn validate(report: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../report.schema.json")).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

/// A path in the temporary directory named for this test and process (`rxbench-NAME-PID`),
/// so that test binaries running side by side never share one.
pub fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rxbench-{name}-{}", std::process::id()))
}

/// Whether the kernel runs the xdp-live generator (live frames from a test run); a kernel
/// that refuses it even to root skips the test, saying so (see `require_kernel`).
pub fn xdp_live_allowed(test: &str) -> bool {
    let refused = zcrx_kflows::bpf::live_frames_refused().map(|e| e.to_string());
    zcrx_ring::lab::require_kernel(test, "BPF_F_TEST_XDP_LIVE_FRAMES", refused)
}
