//! `rxbench --quick` for real (root, netns): every receive mode accounts for every frame,
//! figures are non-zero and finite, and the JSON matches `report.schema.json`.
//! Under `CI=true` a skip is a failure.

use std::process::Command;

use serde_json::Value;

#[test]
fn quick_run_accounts_for_every_frame_and_matches_the_schema() {
    if !zcrx_ring::lab::require_privileges("rxbench --quick") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rxbench-quick-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_rxbench"))
        .args(["--quick", "--json"])
        .arg(&json)
        .arg("--svg")
        .arg(dir.join("svg"))
        .output()
        .expect("run rxbench");
    assert!(
        out.status.success(),
        "rxbench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ring-zerocopy") && stdout.contains("sockets-recvmmsg"),
        "{stdout}"
    );

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(include_str!("../report.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");

    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 9, "every mode ran");
    for r in results {
        let mode = r["mode"].as_str().unwrap();
        let num = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        for k in [
            "sent",
            "machine_ns_per_sent",
            "wall_s",
            "generator_ns_per_pkt",
        ] {
            assert!(num(k).is_finite() && num(k) > 0.0, "{mode}: {k} = {}", r[k]);
        }
        if !r["receives"].as_bool().unwrap() {
            continue;
        }
        let (sent, delivered, dropped) = (
            r["sent"].as_u64().unwrap(),
            r["delivered"].as_u64().unwrap(),
            r["dropped"].as_u64().unwrap(),
        );
        assert_eq!(
            delivered + dropped,
            sent,
            "{mode}: delivered {delivered} + dropped {dropped} != sent {sent}"
        );
        assert_eq!(r["unaccounted"].as_i64(), Some(0));
        for k in ["delivered", "delivered_pps", "machine_ns_per_delivered"] {
            assert!(num(k).is_finite() && num(k) > 0.0, "{mode}: {k} = {}", r[k]);
        }
        let lat = &r["latency"];
        assert!(
            lat["samples"].as_u64().unwrap() > 0 && lat["p50_ns"].as_u64().unwrap() > 0,
            "{mode}: latency {lat}"
        );
        assert!(r["flow_max"].as_u64().unwrap() >= r["flow_min"].as_u64().unwrap());
    }
    assert!(
        dir.join("svg/cpu-per-packet.svg").exists() && dir.join("svg/latency-cdf-64B.svg").exists()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_are_refused_with_a_clear_message() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rxbench"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--modes", "ring-turbo"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown mode \"ring-turbo\""));
    let out = run(&["--sizes", "abc"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sizes"));
    let out = run(&["lab", "sideways"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("up"));
}
