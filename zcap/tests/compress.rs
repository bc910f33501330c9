//! Compressed capture files (`-w FILE.gz|.zst|.lz4`, `--compress`): read back by the
//! compressors' own tools piped into tcpdump, by tshark where it can, and by `zcap -r` from
//! their magic bytes; rotated live; cut back to whole records when the disk fills.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, pcap_bytes, stderr, tcpdump_lines, zcap_in};

use common::{count, fresh_dir as dir};
use zcrx_ring::lab::Need;

/// Each compressor, pcap and pcapng: `zcat`/`zstdcat`/`lz4cat | tcpdump -r -` print exactly
/// the lines of the uncompressed file, `zcap -r` reads it (by its magic, also under a name
/// that says nothing), and tshark reads it directly.
#[test]
fn compressed_files_read_back_with_the_compressors_tools_and_zcap() {
    zcrx_ring::require!(
        Need::Tool("zcat"),
        Need::Tool("zstdcat"),
        Need::Tool("lz4cat"),
        Need::Tool("tcpdump"),
        Need::Tool("tshark")
    );
    let d = dir("compress-read");
    std::fs::write(d.join("in.pcap"), pcap_bytes(20_000, 16)).unwrap();
    let mut tshark = Vec::new();
    for ng in [false, true] {
        let ext = if ng { "pcapng" } else { "pcap" };
        let mut args = vec!["-r", "in.pcap"];
        if ng {
            args.push("--pcapng");
        }
        let plain = format!("plain.{ext}");
        let o = zcap_in(&d, &[&args[..], &["-w", &plain]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let want = tcpdump_lines(&d, "cat", &plain);
        assert_eq!(want.len(), 20_000);
        for (suffix, cat) in [("gz", "zcat"), ("zst", "zstdcat"), ("lz4", "lz4cat")] {
            let name = format!("out.{ext}.{suffix}");
            let o = zcap_in(&d, &[&args[..], &["-w", &name]].concat());
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            assert_eq!(count(&stderr(&o), " packets captured"), 20_000);
            assert_eq!(tcpdump_lines(&d, cat, &name), want, "{name}");
            // zcap reads it back by its first bytes, under any name.
            let renamed = format!("renamed-{ext}-{suffix}");
            std::fs::copy(d.join(&name), d.join(&renamed)).unwrap();
            let o = zcap_in(&d, &["-r", &renamed, "-w", "back.pcap"]);
            assert!(o.status.success(), "{renamed}: {}", stderr(&o));
            assert_eq!(count(&stderr(&o), " packets captured"), 20_000);
            assert_eq!(
                tcpdump_lines(&d, "cat", "back.pcap").len(),
                20_000,
                "{renamed}"
            );
            let t = Command::new("tshark")
                .current_dir(&d)
                .args(["-n", "-r", &name])
                .output()
                .unwrap();
            let lines = String::from_utf8_lossy(&t.stdout).lines().count();
            tshark.push(format!(
                "{name}: {}",
                if t.status.success() {
                    format!("{lines} packets")
                } else {
                    format!("refused: {}", stderr(&t).trim())
                }
            ));
            // Debian 12's tshark (4.0) reads all three: each file is one stream.
            assert!(t.status.success(), "tshark {name}: {}", stderr(&t));
            assert_eq!(lines, 20_000, "tshark {name}");
        }
    }
    eprintln!("tshark: {}", tshark.join("; "));

    // --compress, whatever the name; its level; what it refuses.
    let o = zcap_in(
        &d,
        &["-r", "in.pcap", "--compress", "zstd:1", "-w", "out.bin"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let head = std::fs::read(d.join("out.bin")).unwrap();
    assert_eq!(head[..4], [0x28, 0xb5, 0x2f, 0xfd], "a Zstandard frame");
    assert_eq!(tcpdump_lines(&d, "zstdcat", "out.bin").len(), 20_000);
    for (args, says) in [
        (vec!["--compress", "brotli", "-w", "x"], "gzip, zstd or lz4"),
        (
            vec!["--compress", "zstd:30", "-w", "x"],
            "zstd levels are 1-19",
        ),
        (vec!["--compress", "gzip", "-w", "-"], "zcap -w - | zstd"),
        (vec!["--compress", "gzip"], "without -w FILE"),
    ] {
        let o = zcap_in(&d, &[&["-r", "in.pcap"], &args[..]].concat());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

/// A live capture rotated with -C into compressed files: every file decompresses whole and
/// together they hold every packet sent, as zcap counted.
#[test]
fn live_rotation_compresses_every_file() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("zstdcat"),
        Need::Tool("tcpdump")
    );
    let d = dir("compress-rotate");
    let lab = zcrx_ring::lab::Lab::new().unwrap();
    let template = d.join("rot.pcap.zst");
    let (child, rx, _) = common::live_on_b(
        &lab,
        &["-q", "-C", "100k", "-w", template.to_str().unwrap(), "udp"],
    );
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    let frames: Vec<Vec<u8>> = (0..5_000).map(|i| flow.frame(i, 200)).collect();
    common::send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(400));
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(count(&err, " packets captured"), 5_000, "{err}");
    let mut files: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    // 5 000 records of 216 bytes: about 1.1 MB before compression, 100 kB a file.
    assert!(files.len() >= 10, "{files:?}");
    let total: usize = files
        .iter()
        .map(|f| tcpdump_lines(&d, "zstdcat", f).len())
        .sum();
    assert_eq!(total, 5_000, "{files:?}");
}

/// Incompressible frames (random payloads) into a gzip, a zstd and an lz4 file on a 900 KiB
/// tmpfs: zcap stops with "disk full", and the file, cut back to the last chunk written
/// whole and its stream ended there, decompresses without an error (the compressor's own
/// tool, tshark) to exactly the packets zcap says it holds.
#[test]
fn a_full_disk_under_a_compressed_file_keeps_what_it_counted() {
    zcrx_ring::require!(
        Need::Privileges,
        Need::Tool("zcat"),
        Need::Tool("zstdcat"),
        Need::Tool("lz4cat"),
        Need::Tool("tcpdump"),
        Need::Tool("tshark")
    );
    let d = dir("compress-full");
    let mut w = pcap_file::pcap::PcapWriter::new(Vec::new()).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..4_000u32 {
        let mut frame = common::udp_frame(i as u16 % 8, i);
        for _ in 0..125 {
            // xorshift64: bytes gzip cannot shrink.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            frame.extend_from_slice(&x.to_le_bytes());
        }
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            Duration::new(1_700_000_000, i),
            frame.len() as u32,
            &frame,
        ))
        .unwrap();
    }
    std::fs::write(d.join("in.pcap"), w.into_writer()).unwrap();
    let mnt = d.join("mnt");
    let _tmpfs = common::small_tmpfs(&mnt, "900k");
    for (suffix, cat) in [("gz", "zcat"), ("zst", "zstdcat"), ("lz4", "lz4cat")] {
        let name = format!("out.pcap.{suffix}");
        let o = Command::new(bin())
            .current_dir(&mnt)
            .args(["-r"])
            .arg(d.join("in.pcap"))
            .args(["-w", &name])
            .stdout(Stdio::null())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("writing {name} failed (disk full)")),
            "{err}"
        );
        let held = count(&err, " packets captured");
        assert!(held > 0 && held < 4_000, "{err}");
        // What the decompressor writes is whole records.
        let o = Command::new("bash")
            .current_dir(&mnt)
            .arg("-c")
            .arg(format!("{cat} {name} 2>/dev/null | tcpdump -n -r -"))
            .output()
            .unwrap();
        let t = stderr(&o);
        assert!(!t.contains("truncated"), "{name}: {t}");
        let lines = String::from_utf8_lossy(&o.stdout).lines().count() as u64;
        assert_eq!(lines, held, "{name}: {err}\n{t}");
        // The stream was ended where it was cut: the decompressor and tshark see no error.
        let o = Command::new(cat)
            .current_dir(&mnt)
            .arg(&name)
            .output()
            .unwrap();
        assert!(o.status.success(), "{cat} {name}: {}", stderr(&o));
        let o = Command::new("tshark")
            .current_dir(&mnt)
            .args(["-n", "-r", &name])
            .output()
            .unwrap();
        assert!(o.status.success(), "tshark {name}: {}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).lines().count() as u64,
            held
        );
        std::fs::remove_file(mnt.join(&name)).unwrap();
    }
}

/// `-U` with a compressed file: every packet is in the file (compressed, flushed) as soon as
/// it is written, while zcap still runs: read back by `zcap -r` (the stream has no end yet).
#[test]
fn packet_buffered_compressed_files_hold_each_packet_at_once() {
    zcrx_ring::require!();
    let d = dir("compress-u");
    let lab = zcrx_ring::lab::Lab::new().unwrap();
    let out = d.join("u.pcap.gz");
    let (child, rx, _) = common::live_on_b(
        &lab,
        &[
            "-q",
            "-U",
            "--block-timeout",
            "10",
            "-w",
            out.to_str().unwrap(),
            "udp",
        ],
    );
    let flow = zcrx_ring::frames::UdpFlow::lab(&lab.a, &lab.b, 7000, 7001, true);
    let frames: Vec<Vec<u8>> = (0..10).map(|i| flow.frame(i, 100)).collect();
    common::send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(500));
    let o = zcap_in(&d, &["-r", out.to_str().unwrap(), "-w", "copy.pcap"]);
    let (ok, _, err) = common::finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(
        count(&stderr(&o), " packets captured"),
        10,
        "while zcap ran: {}",
        stderr(&o)
    );
}
