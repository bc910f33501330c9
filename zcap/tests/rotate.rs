//! zcap's rotating capture files (-C, -W, -G, -z) against tcpdump 4.99's own behaviour: the
//! same file names, the same split points, no packet lost or split between files, pcapng
//! files that each start their own section, -G rotating on an idle link, a full disk during
//! rotation. Privileged parts (a live capture in a namespace, a tmpfs) fail under CI=true
//! instead of skipping.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{stderr, zcap, zcap_in};

use common::fresh_dir as dir;
use zcrx_ring::lab::Need;

/// A pcap of `n` frames of varied sizes (60..360 bytes), microsecond time stamps.
fn input(path: &Path, n: u32) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = pcap_file::pcap::PcapWriter::new(f).unwrap();
    for i in 0..n {
        let len = 60 + (i as usize * 7) % 300;
        let mut frame = vec![(i % 251) as u8; len];
        frame[..4].copy_from_slice(&i.to_be_bytes());
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            Duration::new(1_700_000_000 + u64::from(i / 100), (i % 100) * 1000),
            len as u32,
            &frame,
        ))
        .unwrap();
    }
}

/// Every file of `d`: name -> (size, the first four bytes of each packet as its number).
fn files(d: &Path) -> BTreeMap<String, (u64, Vec<u32>)> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let size = std::fs::metadata(&p).unwrap().len();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, (size, packets(&p)))
        })
        .collect()
}

/// The packet numbers in a pcap or pcapng file (reading it whole: a split record fails).
fn packets(p: &Path) -> Vec<u32> {
    let data = std::fs::read(p).unwrap();
    let mut out = Vec::new();
    if data.starts_with(&0x0A0D_0D0Au32.to_le_bytes()) {
        let mut r = pcap_file::pcapng::PcapNgReader::new(&data[..]).unwrap();
        while let Some(b) = r.next_block() {
            if let pcap_file::pcapng::Block::EnhancedPacket(epb) = b.unwrap() {
                out.push(u32::from_be_bytes(epb.data[..4].try_into().unwrap()));
            }
        }
    } else {
        let mut r = pcap_file::pcap::PcapReader::new(&data[..]).unwrap();
        while let Some(pkt) = r.next_packet() {
            let pkt = pkt.unwrap();
            out.push(u32::from_be_bytes(pkt.data[..4].try_into().unwrap()));
        }
    }
    out
}

/// tcpdump -r IN ARGS in `d` (as root: Debian's tcpdump otherwise drops to user tcpdump,
/// which cannot write there).
fn tcpdump_in(d: &Path, input: &Path, args: &[&str]) {
    let out = Command::new("tcpdump")
        .current_dir(d)
        .args(["-Z", "root", "-r"])
        .arg(input)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "tcpdump: {}", stderr(&out));
}

#[test]
fn size_rotation_names_and_splits_files_as_tcpdump_does() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let base = dir("rotate-size");
    let input_path = base.join("in.pcap");
    input(&input_path, 30_000);
    for args in [
        &["-C", "1", "-w", "out"][..],
        &["-C", "2", "-w", "out"],
        &["-C", "1", "-W", "4", "-w", "out"],
        &["-C", "1", "-W", "11", "-w", "out"],
        &["-C", "1", "-W", "1", "-w", "out"],
    ] {
        let (t, z) = (base.join("t"), base.join("z"));
        for d in [&t, &z] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d).unwrap();
        }
        tcpdump_in(&t, &input_path, args);
        let o = zcap_in(&z, &[&["-r", input_path.to_str().unwrap()], args].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let (tf, zf) = (files(&t), files(&z));
        // Same names, sizes (our pcap has the same header and record sizes as tcpdump's) and
        // packets in each file.
        assert_eq!(
            tf.keys().collect::<Vec<_>>(),
            zf.keys().collect::<Vec<_>>(),
            "{args:?}"
        );
        assert_eq!(tf, zf, "{args:?}");
        if !args.contains(&"-W") {
            // Every packet once, in order, across the files.
            let all: Vec<u32> = zf.values().flat_map(|(_, p)| p.clone()).collect();
            let mut sorted = all.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..30_000).collect::<Vec<_>>(), "{args:?}");
        }
    }
}

#[test]
fn pcapng_files_each_start_a_section_and_lose_nothing() {
    let base = dir("rotate-pcapng");
    let input_path = base.join("in.pcap");
    input(&input_path, 20_000);
    let d = base.join("z");
    std::fs::create_dir_all(&d).unwrap();
    let from = input_path.to_str().unwrap();
    let o = zcap_in(&d, &["-r", from, "--pcapng", "-C", "1", "-w", "cap.pcapng"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = files(&d);
    assert!(f.len() >= 4, "{:?}", f.keys());
    let mut all: Vec<u32> = Vec::new();
    for (name, (size, pkts)) in &f {
        let data = std::fs::read(d.join(name)).unwrap();
        assert_eq!(
            data[..4],
            0x0A0D_0D0Au32.to_le_bytes(),
            "{name}: a section header first"
        );
        assert!(*size < 1_000_000 + 400, "{name}: {size} bytes");
        all.extend(pkts);
    }
    all.sort_unstable();
    assert_eq!(all, (0..20_000).collect::<Vec<_>>());
    if zcrx_ring::lab::require("rotate: tshark reads the files", &[Need::Tool("tshark")]) {
        for name in f.keys() {
            let t = Command::new("tshark")
                .args(["-r"])
                .arg(d.join(name))
                .output()
                .unwrap();
            assert!(t.status.success(), "tshark {name}: {}", stderr(&t));
        }
    }
}

#[test]
fn post_rotate_command_runs_on_each_closed_file_as_tcpdump_does() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let base = dir("rotate-z");
    let input_path = base.join("in.pcap");
    input(&input_path, 30_000);
    let (t, z) = (base.join("t"), base.join("z"));
    std::fs::create_dir_all(&t).unwrap();
    std::fs::create_dir_all(&z).unwrap();
    let args = ["-C", "2", "-z", "gzip", "-w", "out"];
    tcpdump_in(&t, &input_path, &args);
    let o = zcap_in(
        &z,
        &[&["-r", input_path.to_str().unwrap()], &args[..]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // tcpdump does not wait for its gzip children: give them a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    while names(&t)
        .iter()
        .any(|n| n.starts_with("out") && !n.ends_with(".gz") && n != "out3")
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Closed files are compressed, the last one is not (as tcpdump).
    assert_eq!(names(&z), ["out.gz", "out1.gz", "out2.gz", "out3"]);
    assert_eq!(names(&t), names(&z));
}

#[test]
fn bad_rotation_flags_are_refused_before_anything_is_written() {
    let base = dir("rotate-bad");
    let input_path = base.join("in.pcap");
    input(&input_path, 10);
    let w = base.join("out").display().to_string();
    for (args, msg) in [
        (vec!["-C", "1"], "-C cannot be used without -w FILE"),
        (
            vec!["-C", "1", "-w", "-"],
            "-C cannot be used without -w FILE",
        ),
        (vec!["-C", "0", "-w", &w], "-C 0: invalid file size"),
        (vec!["-C", "1x", "-w", &w], "-C 1x: invalid file size"),
        (vec!["-C", "99999999999999g", "-w", &w], "too large"),
        (vec!["-G", "5"], "-G cannot be used without -w FILE"),
        (vec!["-W", "3", "-w", &w], "-W needs -C or -G"),
        (
            vec!["-z", "gzip", "-w", &w],
            "-z cannot be used without -w and (-C or -G)",
        ),
    ] {
        let mut full = vec!["-r", input_path.to_str().unwrap()];
        full.extend(&args);
        let o = zcap(&full);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
        assert!(!base.join("out").exists(), "{args:?}: nothing written");
    }
    // Numbers out of their range are usage errors, refused as clap parses (exit 2).
    for (args, msg) in [
        (vec!["-G", "0", "-w", &w], "-G 0"),
        (vec!["-W", "0", "-C", "1", "-w", &w], "-W 0"),
    ] {
        let mut full = vec!["-r", input_path.to_str().unwrap()];
        full.extend(&args);
        let o = zcap(&full);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
        assert!(!base.join("out").exists(), "{args:?}: nothing written");
    }
}

#[test]
fn time_rotation_happens_on_an_idle_link_and_stops_after_w_files() {
    zcrx_ring::require!();
    let lab = zcrx_ring::lab::Lab::new().unwrap();
    let d = dir("rotate-time");
    let template = d.join("idle-%Y%m%d-%H%M%S.pcap").display().to_string();
    let started = Instant::now();
    let (child, rx, _) = common::live_on_b(&lab, &["-q", "-G", "1", "-W", "3", "-w", &template]);
    // No packet is sent: tcpdump would never rotate here.
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut child = child;
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (ok, _, err) = common::finish_live(child, rx, false);
    let took = started.elapsed();
    assert!(ok, "exit 0 after -W files: {err}");
    assert!(err.contains("Maximum file limit reached: 3"), "{err}");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for n in &names {
        // idle-YYYYmmdd-HHMMSS.pcap, a valid empty capture.
        assert!(
            n.starts_with("idle-") && n.ends_with(".pcap") && n.len() == 25,
            "{n}"
        );
        assert!(n[5..13].chars().all(|c| c.is_ascii_digit()), "{n}");
        assert_eq!(packets(&d.join(n)), Vec::<u32>::new());
    }
}

/// `zcap -r` of `n` packets with `args` into a tmpfs of `size` (e.g. "900k"), in `name`'s
/// directory: its output, and the files it left (name to size and packets).
fn on_small_tmpfs(
    name: &str,
    n: u32,
    size: &str,
    args: &[&str],
) -> (std::process::Output, BTreeMap<String, (u64, Vec<u32>)>) {
    let base = dir(name);
    let input_path = base.join("in.pcap");
    input(&input_path, n);
    let mnt = base.join("mnt");
    let _tmpfs = common::small_tmpfs(&mnt, size);
    let o = zcap_in(
        &mnt,
        &[&["-r", input_path.to_str().unwrap()], args].concat(),
    );
    let f = files(&mnt);
    (o, f)
}

/// The count zcap printed on a line ending in " packets captured".
fn captured_count(err: &str) -> usize {
    common::count(err, " packets captured") as usize
}

#[test]
fn a_full_disk_during_rotation_keeps_every_file_whole() {
    zcrx_ring::require!();
    let (o, f) = on_small_tmpfs("rotate-full", 30_000, "2600k", &["-C", "1", "-w", "out"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("(disk full)"), "{err}");
    assert!(err.contains("file(s) before it are complete"), "{err}");
    assert_eq!(
        f.keys().collect::<Vec<_>>(),
        ["out", "out1", "out2"],
        "{err}"
    );
    // Every file reads whole; together they hold packets 0..N in order, none twice.
    let all: Vec<u32> = f.values().flat_map(|(_, p)| p.clone()).collect();
    assert_eq!(all, (0..all.len() as u32).collect::<Vec<_>>());
    assert_eq!(captured_count(&err), all.len(), "{err}");
}

/// The disk fills while a rotation flushes the file it closes (the buffered 200 KiB past
/// the last 256 KiB hand-over do not fit in 900 KiB): the packets that file holds are
/// counted once (not once when the rotation fails and again when the capture ends).
#[test]
fn a_rotation_that_fills_the_disk_counts_its_packets_once() {
    zcrx_ring::require!();
    let (o, f) = on_small_tmpfs(
        "rotate-full-flush",
        30_000,
        "900k",
        &["-C", "1", "-w", "out"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("writing out failed (disk full)"), "{err}");
    assert_eq!(f.keys().collect::<Vec<_>>(), ["out"], "{err}");
    let all: Vec<u32> = f.values().flat_map(|(_, p)| p.clone()).collect();
    assert!(!all.is_empty());
    assert_eq!(all, (0..all.len() as u32).collect::<Vec<_>>());
    assert_eq!(captured_count(&err), all.len(), "{err}");
}
