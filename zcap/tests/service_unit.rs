//! `dist/zcap@.service`, the unit an operator installs: `systemd-analyze verify` accepts it
//! (with this build's zcap in place of /usr/local/bin/zcap), it keeps the promises
//! docs/zcap.md makes of it, and `systemd-analyze security --offline=yes` rates its exposure
//! "OK" or better.

use std::process::Command;

use zcrx_ring::lab::Need;

const UNIT: &str = include_str!("../../dist/zcap@.service");

/// The unit with this build's zcap, in a directory of its own as `zcap@NAME.service`.
fn installed(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zcap-unit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let zcap = env!("CARGO_BIN_EXE_zcap");
    std::fs::write(
        dir.join("zcap@.service"),
        UNIT.replace("/usr/local/bin/zcap", zcap),
    )
    .unwrap();
    dir
}

#[test]
fn the_unit_holds_what_the_manual_promises() {
    let setting = |line: &str| UNIT.lines().any(|l| l.trim() == line);
    for line in [
        "DynamicUser=yes",
        "CapabilityBoundingSet=CAP_NET_RAW",
        "AmbientCapabilities=CAP_NET_RAW",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/zcap/%i",
        "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_PACKET AF_INET AF_INET6",
        "SystemCallFilter=@system-service",
        "IPAddressAllow=localhost",
        "IPAddressDeny=any",
        "UMask=0077",
        "MemoryMax=2G",
        "TasksMax=64",
        "SocketBindDeny=any",
    ] {
        assert!(setting(line), "dist/zcap@.service lacks {line}");
    }
    let exec = UNIT
        .lines()
        .find(|l| l.starts_with("ExecStart="))
        .expect("ExecStart");
    assert!(
        exec.contains("-i %i") && exec.contains("/var/lib/zcap/%i/"),
        "{exec}"
    );
}

#[test]
fn systemd_verifies_the_unit_and_rates_its_exposure_ok() {
    zcrx_ring::require!(Need::Tool("systemd-analyze"));
    let dir = installed("verify");
    let verify = Command::new("systemd-analyze")
        .current_dir(&dir)
        .args(["verify", "--man=no", "zcap@eth0.service"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success(), "systemd-analyze verify: {said}");
    assert!(
        said.trim().is_empty(),
        "systemd-analyze verify warned: {said}"
    );
    let security = Command::new("systemd-analyze")
        .current_dir(&dir)
        .args([
            "security",
            "--offline=yes",
            "--no-pager",
            "zcap@eth0.service",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&security.stdout);
    let overall = out
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no exposure level: {out}"));
    println!("{overall}");
    let score: f64 = overall
        .split(':')
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{overall}"));
    // systemd's scale: 0-2.0 "OK", then MEDIUM, EXPOSED, UNSAFE; the unit rates below 1.5.
    assert!(overall.contains(" OK") && score < 1.5, "{overall}");
}
