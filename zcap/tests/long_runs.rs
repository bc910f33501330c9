//! Memory over long runs: `--flows` keeps a line per flow key for its final table, not a
//! record per active-timeout report, so a replay of two days of steady flows peaks at the
//! resident memory of one hour's replay. No privileges: the traffic is generated here and
//! streamed to `zcap -r -`.

use crate::common;

use std::io::{BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, stderr};
use zcrx_ring::frames::UdpFlow;

/// Flows of the steady traffic.
const FLOWS: u16 = 64;
/// Seconds between two packets of a flow: under UDP's 60 s idle timeout, so every flow stays
/// in the table, and the active timeout (60 s) reports each one every other packet.
const EVERY_S: u64 = 30;
/// Frame length: one hour of packets fills the offline ring's four 1 MiB blocks more than
/// once, so both replays have touched every block before their peak.
const FRAME: usize = 700;
/// 2023-11-14T22:13:20Z.
const T0_S: u64 = 1_700_000_000;

/// `hours` of the steady traffic as a pcap stream on `out`: every `EVERY_S` seconds, one
/// packet of each flow, a millisecond apart.
fn steady_traffic(hours: u64, out: impl Write) {
    let frames: Vec<Vec<u8>> = (0..FLOWS)
        .map(|i| UdpFlow::synthetic(i).frame(u64::from(i), FRAME))
        .collect();
    let mut w = pcap_file::pcap::PcapWriter::new(BufWriter::with_capacity(1 << 20, out)).unwrap();
    for round in 0..hours * 3600 / EVERY_S {
        for (i, f) in frames.iter().enumerate() {
            let ts = Duration::from_secs(T0_S + round * EVERY_S) + Duration::from_millis(i as u64);
            w.write_packet(&pcap_file::pcap::PcapPacket::new(ts, f.len() as u32, f))
                .unwrap();
        }
    }
    w.into_writer().flush().unwrap();
}

/// `zcap -r - --flows --active-timeout 60` over `hours` of the steady traffic: its peak
/// resident set (KiB, GNU time's %M), its final table's lines and its standard error.
fn replay(hours: u64) -> (u64, Vec<String>, String) {
    let child = Command::new("/usr/bin/time")
        .args(["-f", "maxrss %M", &bin()])
        .args(["-r", "-", "--flows", "--json", "--active-timeout", "60"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        panic!("/usr/bin/time is needed (scripts/deps.sh installs it)");
    };
    let stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || steady_traffic(hours, stdin));
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{hours} h: {err}");
    let rss = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maxrss in {err}"));
    let lines = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (rss, lines, err)
}

/// 48 hours of 64 steady flows (an active-timeout report per flow a minute: 184 320
/// records) peak at the resident memory of one hour (3 840 records), within 1 MiB: between
/// two runs of the same program only the allocator's and the kernel's rounding vary (a few
/// hundred KiB), while a record kept per report adds megabytes. The final table has one
/// line per flow, its packets those of the whole replay.
#[test]
fn two_days_of_flows_peak_at_the_memory_of_one_hour() {
    let (hour, hour_lines, _) = replay(1);
    let (days, days_lines, err) = replay(48);
    eprintln!("peak RSS: 1 h {hour} KiB, 48 h {days} KiB");
    assert!(
        days <= hour + 1024,
        "peak RSS: 48 h {days} KiB against 1 h {hour} KiB"
    );
    for (hours, lines) in [(1, &hour_lines), (48, &days_lines)] {
        assert_eq!(lines.len(), usize::from(FLOWS), "{hours} h: {lines:?}");
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let packets = hours * 3600 / EVERY_S;
            assert_eq!(
                v["packets"],
                serde_json::json!([packets, 0]),
                "{hours} h: {l}"
            );
        }
    }
    assert!(!err.contains("not in it"), "{err}");
}
