//! zcap end to end, checked with the real tools (tcpdump, tshark, installed by the test
//! set-up): files they read back, flows they agree on, live capture in a netns lab, bad
//! files, privilege drop, a full disk. Privileged tests fail instead of skipping under CI=true.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{finish_live, live_on_b, send, stderr, tmp, tshark_fields, zcap, zcap_json};

use zcrx_flowcache::testdata::{tcp6_with_ext, udp4, with_vlan};
use zcrx_ring::frames::UdpFlow;
use zcrx_ring::lab::{Lab, Need};

/// "N packets captured" from zcap's final counts.
fn captured(err: &str) -> u64 {
    err.lines()
        .find_map(|l| l.strip_suffix(" packets captured"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {err}"))
}

/// A pcap (microsecond, as most tools write) with IPv4 UDP/TCP, IPv6 with extension headers,
/// VLAN, IPv4 and IPv6 fragments and an ARP frame.
fn mixed_pcap(path: &Path) -> Vec<Vec<u8>> {
    let a = [198, 18, 0, 1];
    let b = [198, 18, 0, 2];
    let a6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let mut frames = vec![
        udp4(a, b, 1234, 53, 20),
        udp4(b, a, 53, 1234, 100),
        tcp6_with_ext(a6, b6, 40000, 443, 0x02),
    ];
    frames.push(with_vlan(&udp4(a, b, 5000, 5001, 30), 0x0064));
    let mut tcp = udp4(a, b, 0, 0, 12); // rewritten into TCP below
    tcp[23] = 6;
    tcp[34..38].copy_from_slice(&[0x1f, 0x90, 0x00, 0x50]);
    tcp[46] = 0x50;
    tcp.resize(14 + 20 + 20, 0);
    tcp[16..18].copy_from_slice(&40u16.to_be_bytes());
    tcp[24..26].copy_from_slice(&[0, 0]);
    frames.push(tcp);
    let mut first = udp4(a, b, 7000, 7001, 40);
    first[20] = 0x20; // MF
    frames.push(first);
    let mut later = udp4(a, b, 7000, 7001, 40);
    later[20] = 0x00;
    later[21] = 0x06; // offset 48 bytes
    frames.push(later);
    let mut v6frag = tcp6_with_ext(a6, b6, 1, 2, 0x10);
    // Turn the destination-options header into a fragment header, offset 8, M=0.
    v6frag[54 + 8] = 44;
    v6frag[54 + 16..54 + 24].copy_from_slice(&[6, 0, 0x00, 0x40, 0, 0, 0, 9]);
    frames.push(v6frag);
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    frames.push(arp);
    let f = std::fs::File::create(path).unwrap();
    let mut w = pcap_file::pcap::PcapWriter::new(f).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        w.write_packet(&pcap_file::pcap::PcapPacket::new(
            Duration::new(1_700_000_000 + i as u64, 123_000),
            fr.len() as u32,
            fr,
        ))
        .unwrap();
    }
    frames
}

#[test]
fn tshark_and_tcpdump_read_zcaps_pcap_and_pcapng_with_the_same_counts_and_bytes() {
    zcrx_ring::require!(Need::Tool("tshark"), Need::Tool("tcpdump"));
    let input = tmp("mixed.pcap");
    let frames = mixed_pcap(&input);
    let total: usize = frames.iter().map(|f| f.len()).sum();
    for (name, extra) in [("out.pcap", None), ("out.pcapng", Some("--pcapng"))] {
        let out_path = tmp(name);
        let mut args = vec![
            "-r",
            input.to_str().unwrap(),
            "-w",
            out_path.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = zcap(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(captured(&stderr(&o)), frames.len() as u64);
        let td = Command::new("tcpdump")
            .args(["-n", "-r"])
            .arg(&out_path)
            .output()
            .unwrap();
        assert!(
            td.status.success(),
            "tcpdump: {}",
            String::from_utf8_lossy(&td.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&td.stdout).lines().count(),
            frames.len(),
            "tcpdump count for {name}"
        );
        let lens: Vec<usize> = tshark_fields(&out_path, &[], &["frame.len"])
            .iter()
            .map(|row| row[0].trim().parse().unwrap())
            .collect();
        assert_eq!(lens.len(), frames.len(), "tshark count for {name}");
        assert_eq!(lens.iter().sum::<usize>(), total, "tshark bytes for {name}");
    }
}

#[test]
fn five_tuples_in_json_match_tshark_fields() {
    zcrx_ring::require!(Need::Tool("tshark"));
    let input = tmp("tuples.pcap");
    let frames = mixed_pcap(&input);
    let ours = zcap_json(&input);
    assert_eq!(ours.len(), frames.len());
    let theirs = tshark_fields(
        &input,
        &["-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE"],
        &[
            "ip.src",
            "ip.dst",
            "ipv6.src",
            "ipv6.dst",
            "udp.srcport",
            "udp.dstport",
            "tcp.srcport",
            "tcp.dstport",
            "vlan.id",
        ],
    );
    assert_eq!(theirs.len(), frames.len());
    for (i, (z, t)) in ours.iter().zip(&theirs).enumerate() {
        let (src, dst) = if !t[0].is_empty() {
            (&t[0], &t[1])
        } else {
            (&t[2], &t[3])
        };
        if src.is_empty() {
            assert!(z["src"].is_null(), "frame {i}: tshark sees no IP, zcap {z}");
            continue;
        }
        assert_eq!(z["src"].as_str().unwrap(), src, "frame {i}");
        assert_eq!(z["dst"].as_str().unwrap(), dst, "frame {i}");
        let (sp, dp) = if !t[4].is_empty() {
            (&t[4], &t[5])
        } else {
            (&t[6], &t[7])
        };
        if sp.is_empty() {
            // tshark shows no transport header: a fragment. zcap shows ports only for a
            // first fragment, never for a later one.
            assert!(z["fragment"] != "no", "frame {i}: {z}");
            if z["fragment"] == "later" {
                assert!(
                    z["sport"].is_null() && z["dport"].is_null(),
                    "frame {i}: {z}"
                );
            }
        } else {
            assert_eq!(z["sport"].as_u64().unwrap().to_string(), *sp, "frame {i}");
            assert_eq!(z["dport"].as_u64().unwrap().to_string(), *dp, "frame {i}");
        }
        if !t[8].is_empty() {
            assert_eq!(z["vlan"].as_u64().unwrap().to_string(), t[8], "frame {i}");
        }
    }
}

#[test]
fn bad_files_give_an_error_not_a_panic() {
    let empty = tmp("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    let garbage = tmp("garbage.pcap");
    std::fs::write(
        &garbage,
        (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761u32) >> 24) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let good = tmp("good.pcap");
    let frames = mixed_pcap(&good);
    let bytes = std::fs::read(&good).unwrap();
    let cut = tmp("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let hostile = tmp("hostile.pcap");
    let mut h = bytes[..24].to_vec();
    h.extend_from_slice(&[
        0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
    ]); // incl_len 2 GiB
    std::fs::write(&hostile, &h).unwrap();
    for (path, want) in [
        (&empty, "empty file"),
        (&garbage, "not a pcap or pcapng file"),
        (&cut, "truncated or malformed after"),
        (&hostile, "truncated or malformed"),
        (&tmp("missing.pcap"), "No such file"),
    ] {
        let o = zcap(&["-r", path.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        assert!(
            stderr(&o).contains(want),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
    }
    // The good packets before the cut were still shown.
    let o = zcap(&["-r", cut.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        frames.len() - 1
    );
    // Bad arguments.
    for (args, want) in [
        (vec!["-i", "lo", "-r", "x"], "exclude"),
        (
            vec!["-r", good.to_str().unwrap(), "--delivery", "turbo"],
            "--delivery",
        ),
        (vec!["-r", good.to_str().unwrap(), "-c", "0"], "-c 0"),
        (
            vec!["-r", good.to_str().unwrap(), "udp", "port", "notaport"],
            "filter",
        ),
    ] {
        let o = zcap(&args);
        assert!(
            !o.status.success() && o.status.code() != Some(101),
            "{args:?}"
        );
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn offline_filter_runs_in_user_space() {
    let input = tmp("filter.pcap");
    mixed_pcap(&input);
    let o = zcap(&[
        "-r",
        input.to_str().unwrap(),
        "--json",
        "udp",
        "and",
        "port",
        "53",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines
        .iter()
        .all(|l| l.contains("\"proto\":\"udp\"") && l.contains("53")));
}

fn flows(lab: &Lab, ports: &[u16]) -> Vec<UdpFlow> {
    ports
        .iter()
        .enumerate()
        .map(|(i, &dport)| UdpFlow::lab(&lab.a, &lab.b, i as u16, dport, false))
        .collect()
}

fn count_in_file(path: &Path) -> usize {
    let td = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        td.status.success(),
        "tcpdump -r {}: {}",
        path.display(),
        String::from_utf8_lossy(&td.stderr)
    );
    String::from_utf8_lossy(&td.stdout).lines().count()
}

#[test]
fn live_capture_of_k_packets_writes_k() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let out = tmp("live.pcap");
    const K: usize = 5000;
    let (child, rx, _) = live_on_b(
        &lab,
        &["-c", &K.to_string(), "-w", out.to_str().unwrap(), "-q"],
    );
    let f = flows(&lab, &[9000, 9001, 9002]);
    let frames: Vec<Vec<u8>> = (0..K)
        .map(|s| f[s % 3].frame(s as u64, 100 + s % 900))
        .collect();
    send(&lab, &frames);
    let (ok, _, err) = finish_live(child, rx, false);
    assert!(ok, "{err}");
    assert_eq!(captured(&err), K as u64, "{err}");
    assert_eq!(count_in_file(&out), K);
}

#[test]
fn live_kernel_filter_captures_exactly_one_flow_and_sigint_leaves_a_valid_file() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    let lab = Lab::new().unwrap();
    let out = tmp("filtered.pcapng");
    let (child, rx, _) = live_on_b(
        &lab,
        &[
            "-w",
            out.to_str().unwrap(),
            "--pcapng",
            "-q",
            "udp",
            "port",
            "9001",
        ],
    );
    let f = flows(&lab, &[9000, 9001, 9002, 9003]);
    let frames: Vec<Vec<u8>> = (0..2000).map(|s| f[s % 4].frame(s as u64, 120)).collect();
    send(&lab, &frames);
    std::thread::sleep(Duration::from_millis(300)); // one block timeout and more
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(captured(&err), 500, "{err}");
    assert!(err.contains("500 packets received by filter"), "{err}");
    assert!(err.contains("0 packets dropped by kernel"), "{err}");
    let td = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(&out)
        .output()
        .unwrap();
    let lines: Vec<String> = String::from_utf8_lossy(&td.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 500);
    assert!(
        lines.iter().all(|l| l.contains(".9001:")),
        "{:?}",
        &lines[..3]
    );
}

#[test]
fn live_flows_table_and_json_lines() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let (child, rx, _) = live_on_b(&lab, &["--flows", "--json", "-c", "300", "-q"]);
    let f = flows(&lab, &[9000, 9001, 9002]);
    let frames: Vec<Vec<u8>> = (0..300)
        .map(|s| f[s % 3].frame(s as u64, 100 + (s % 3) * 100))
        .collect();
    send(&lab, &frames);
    let (ok, out, err) = finish_live(child, rx, false);
    assert!(ok, "{err}");
    let recs: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_port: HashMap<u64, u64> = recs
        .iter()
        .map(|r| {
            (
                r["dport"]
                    .as_u64()
                    .unwrap()
                    .max(r["sport"].as_u64().unwrap()),
                r["packets"][0].as_u64().unwrap() + r["packets"][1].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by_port.values().sum::<u64>(), 300);
    assert_eq!(by_port.len(), 3, "{recs:?}");
    // Sorted by bytes: the 300-byte flow first.
    assert_eq!(recs[0]["dport"].as_u64().unwrap(), 9002);
}

#[test]
fn dash_z_nobody_really_drops_privileges() {
    zcrx_ring::require!();
    let lab = Lab::new().unwrap();
    let (child, rx, startup) = live_on_b(&lab, &["-Z", "nobody", "-q", "-w", "/dev/null"]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let uid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .unwrap()
        .to_string();
    let gid = status
        .lines()
        .find(|l| l.starts_with("Gid:"))
        .unwrap()
        .to_string();
    let caps = status
        .lines()
        .find(|l| l.starts_with("CapEff:"))
        .unwrap()
        .to_string();
    // The bounding set too, in the monitor and in the worker that parses.
    for pid in [child.id(), common::worker(child.id())] {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        assert!(
            status.contains("CapBnd:\t0000000000000000"),
            "{pid}: {status}"
        );
    }
    let (ok, _, err) = finish_live(child, rx, true);
    assert!(ok, "{err}");
    assert_eq!(
        uid.split_whitespace().skip(1).collect::<Vec<_>>(),
        vec!["65534"; 4],
        "{uid}"
    );
    assert!(
        gid.split_whitespace().skip(1).all(|g| g == "65534"),
        "{gid}"
    );
    assert!(
        caps.ends_with("0000000000000000"),
        "no capabilities left: {caps}"
    );
    assert!(
        startup.contains("dropped privileges to nobody"),
        "{startup}"
    );
}

#[test]
fn a_full_disk_gives_a_clear_error_and_a_valid_file() {
    zcrx_ring::require!(Need::Privileges, Need::Tool("tcpdump"));
    // A 64 KiB tmpfs: writing ~100 KiB of packets fills it.
    let mnt = tmp("full");
    let _tmpfs = common::small_tmpfs(&mnt, "64k");
    let input = tmp("big.pcap");
    {
        let f = std::fs::File::create(&input).unwrap();
        let mut w = pcap_file::pcap::PcapWriter::new(f).unwrap();
        for i in 0..100u32 {
            let fr = udp4(
                [198, 18, 0, 1],
                [198, 18, 0, 2],
                1000,
                2000,
                1000 + (i % 7) as usize,
            );
            w.write_packet(&pcap_file::pcap::PcapPacket::new(
                Duration::from_secs(u64::from(i)),
                fr.len() as u32,
                &fr,
            ))
            .unwrap();
        }
    }
    let out = mnt.join("out.pcap");
    let o = zcap(&["-r", input.to_str().unwrap(), "-w", out.to_str().unwrap()]);
    let err = stderr(&o);
    let n = if o.status.success() {
        None
    } else {
        Some(captured(&err))
    };
    let in_file = count_in_file(&out);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("disk full"), "{err}");
    let n = n.unwrap();
    assert!(n > 0 && n < 100, "{err}");
    assert_eq!(
        in_file as u64, n,
        "the file holds exactly the packets reported captured"
    );
}

/// `frames` as a pcap file, a second apart.
fn write_frames(path: &Path, frames: &[Vec<u8>]) {
    let stamped = frames.iter().enumerate();
    common::write_pcap(
        path,
        stamped.map(|(i, fr)| (Duration::new(1_700_000_000 + i as u64, 0), &fr[..])),
    );
}

/// BIG TCP sends (IPv4 total length 0, frames above 64 KiB) and IPv6 jumbograms, as a
/// host captures them: zcap shows the ports tshark shows for both. (Debian's tcpdump 4.99 is
/// built without GUESS_TSO and prints `IP bad-len 0` for the IPv4 one; it dissects the
/// jumbogram, and agrees there.)
#[test]
fn big_tcp_and_jumbograms_show_the_same_ports_as_tshark_and_tcpdump() {
    use zcrx_flowcache::testdata::{tcp4_big, tcp6_jumbo};
    zcrx_ring::require!(Need::Tool("tshark"), Need::Tool("tcpdump"));
    let a6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b6 = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let frames = vec![
        tcp4_big([198, 18, 0, 1], [198, 19, 0, 1], 5201, 40000, 70_000),
        tcp6_jumbo(a6, b6, 5202, 40001, 100_000),
    ];
    let input = tmp("bigtcp.pcap");
    write_frames(&input, &frames);
    let theirs = tshark_fields(
        &input,
        &[],
        &["ip.src", "ipv6.src", "tcp.srcport", "tcp.dstport"],
    );
    let ours = zcap_json(&input);
    assert_eq!(ours.len(), 2);
    assert_eq!(theirs.len(), 2, "{theirs:?}");
    for (i, (z, t)) in ours.iter().zip(&theirs).enumerate() {
        let src = if t[0].is_empty() { &t[1] } else { &t[0] };
        assert_eq!(z["src"].as_str().unwrap(), src, "frame {i}");
        assert_eq!(z["sport"].to_string(), t[2], "frame {i}: {z}");
        assert_eq!(z["dport"].to_string(), t[3], "frame {i}: {z}");
        assert_eq!(z["len"], frames[i].len(), "frame {i}");
    }
    let td = Command::new("tcpdump")
        .args(["-n", "-r", input.to_str().unwrap()])
        .output()
        .unwrap();
    let theirs = String::from_utf8_lossy(&td.stdout).into_owned();
    assert!(theirs.contains("HBH 5202 > 40001"), "tcpdump: {theirs}");
    let o = zcap(&["-r", input.to_str().unwrap(), "-n"]);
    let ours = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        ours.contains("198.18.0.1.5201 > 198.19.0.1.40000"),
        "{ours}"
    );
    assert!(
        ours.contains("2001:db8::1.5202 > 2001:db8::2.40001"),
        "{ours}"
    );
}

#[test]
fn error_messages_end_with_a_newline_and_say_each_cause_once() {
    let good = tmp("for-errors.pcap");
    mixed_pcap(&good);
    for args in [
        vec!["-r", "/nonexistent/zcap.pcap"],
        vec!["-i", "nope0"],
        vec![
            "-r",
            good.to_str().unwrap(),
            "-w",
            "/nonexistent/dir/out.pcap",
        ],
    ] {
        let o = zcap(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.ends_with('\n'), "{args:?}: no final newline: {err:?}");
        assert!(err.starts_with("zcap: "), "{args:?}: {err:?}");
        if let Some(os) = err.find("(os error") {
            assert_eq!(
                err.matches("(os error").count(),
                1,
                "{args:?}: the OS error twice at {os}: {err}"
            );
        }
    }
    // A number out of its range is clap's usage error (exit 2), in zcap's words.
    let o = zcap(&["-r", good.to_str().unwrap(), "-c", "0"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err, "error: -c 0: the count must be at least 1\n");
}

/// The zcap_offline fuzz target's corpus (minimised, committed) through the real binary,
/// packets and flows with their names (`--json`, `--flows --json --names`): every file ends
/// in exit 0 or 1 with a message, never a panic or a signal, and every stdout line is JSON.
#[test]
fn the_offline_fuzz_corpus_through_the_real_zcap() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/zcap_offline");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.len() >= 10, "corpus too small: {}", files.len());
    let modes: [&[&str]; 2] = [&["--json"], &["--flows", "--json", "--names"]];
    for (f, mode) in files.iter().flat_map(|f| modes.iter().map(move |m| (f, m))) {
        let o = zcap(&[&["-r", f.to_str().unwrap()], *mode].concat());
        let err = stderr(&o);
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{}: {:?} {err}",
            f.display(),
            o.status
        );
        assert!(err.ends_with('\n'), "{}: {err:?}", f.display());
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", f.display()));
        }
    }
}

/// `--help` says what zcap is and groups its options; `--version` names zcrx and the libpcap
/// that compiles the filters (as libpcap itself reports it at run time).
#[test]
fn help_describes_zcap_and_version_names_libpcap() {
    let help = zcap(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("zcap: a tcpdump-compatible"), "{first}");
    for heading in [
        "Capture:",
        "Output:",
        "Ring and pipeline:",
        "Flows and export:",
    ] {
        assert!(text.contains(heading), "no {heading} in\n{text}");
    }
    let version = zcap(&["--version"]);
    assert!(version.status.success());
    let v = String::from_utf8_lossy(&version.stdout);
    assert!(
        v.starts_with("zcap ") && v.contains("zcrx ") && v.contains("libpcap version"),
        "{v}"
    );
}

/// `--count` prints what tcpdump --count prints on standard output ("N packets"), with and
/// without a filter, and `-F FILE` reads the filter as tcpdump does ('#' comments, lines
/// joined, the command-line expression ignored); a missing file is a clear error.
#[test]
fn count_and_filter_file_match_tcpdump() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = tmp("count.pcap");
    mixed_pcap(&path);
    let filter_file = tmp("filter.txt");
    std::fs::write(
        &filter_file,
        "# only DNS\nudp and\n  port 53 # trailing comment\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let f = filter_file.to_str().unwrap();
    let cases: [&[&str]; 4] = [
        &["--count", "-r", p],
        &["--count", "-r", p, "udp"],
        &["--count", "-r", p, "-F", f],
        &["--count", "-r", p, "-F", f, "tcp"],
    ];
    for args in cases {
        let ours = zcap(args);
        assert!(ours.status.success(), "{args:?}: {}", stderr(&ours));
        let theirs = Command::new("tcpdump").args(args).output().unwrap();
        assert!(
            theirs.status.success(),
            "tcpdump {args:?}: {}",
            stderr(&theirs)
        );
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "{args:?}"
        );
    }
    let missing = zcap(&["--count", "-r", p, "-F", "/nonexistent/filter"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("-F /nonexistent/filter: No such file"));
}

/// Time stamp formats (-t .. -ttttt, micro and nano), packet numbers (-#) and `--print`
/// beside `-w` give tcpdump's lines, byte for byte (UTC), including a packet whose time goes
/// backwards and deltas of more than a day.
#[test]
fn time_stamp_formats_and_numbers_match_tcpdump() {
    zcrx_ring::require!(Need::Tool("tcpdump"));
    let path = tmp("stamps.pcap");
    let frames: Vec<(Duration, Vec<u8>)> = [
        (1_700_000_000, 123_456_000),
        (1_700_000_000, 999_999_000),
        (1_700_000_001, 5_000),
        (1_699_999_999, 1_000),  // backwards
        (1_700_100_000, 42_000), // more than a day later
    ]
    .iter()
    .enumerate()
    .map(|(i, &(s, ns))| {
        let f = udp4(
            [198, 18, 0, 1],
            [198, 18, 0, 2],
            1000 + i as u16,
            53,
            20 + i,
        );
        (Duration::new(s, ns), f)
    })
    .collect();
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut w = pcap_file::pcap::PcapWriter::new(f).unwrap();
        for (ts, fr) in &frames {
            w.write_packet(&pcap_file::pcap::PcapPacket::new(*ts, fr.len() as u32, fr))
                .unwrap();
        }
    }
    let p = path.to_str().unwrap();
    let cases: [&[&str]; 9] = [
        &["-n", "-q", "-r", p],
        &["-n", "-q", "-t", "-r", p],
        &["-n", "-q", "-tt", "-r", p],
        &["-n", "-q", "-ttt", "-r", p],
        &["-n", "-q", "-tttt", "-r", p],
        &["-n", "-q", "-ttttt", "-r", p],
        &["-n", "-q", "-#", "-tt", "--nano", "-r", p],
        &["-n", "-q", "--time-stamp-precision=nano", "-tttt", "-r", p],
        &["-n", "-q", "--micro", "-ttt", "-r", p],
    ];
    for args in cases {
        let ours = zcap(args);
        assert!(ours.status.success(), "{args:?}: {}", stderr(&ours));
        let theirs = Command::new("tcpdump")
            .env("TZ", "UTC")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "{args:?}"
        );
    }
    // --print: the lines on standard output while the file is written.
    let out = tmp("stamps-out.pcap");
    let o = out.to_str().unwrap();
    let ours = zcap(&["-n", "-q", "--print", "-w", o, "-r", p]);
    let theirs = Command::new("tcpdump")
        .env("TZ", "UTC")
        .args(["-n", "-q", "-r", p])
        .output()
        .unwrap();
    assert_eq!(ours.stdout, theirs.stdout, "{}", stderr(&ours));
    assert_eq!(count_in_file(&out), frames.len());
    for bad in [
        &["-tttttt"][..],
        &["--time-stamp-precision", "milli"],
        &["--micro", "--nano"],
    ] {
        let mut a = bad.to_vec();
        a.extend(["-r", p]);
        let o = zcap(&a);
        assert_eq!(o.status.code(), Some(1), "{a:?}");
        assert!(
            !stderr(&o).contains("packets captured"),
            "{a:?}: {}",
            stderr(&o)
        );
    }
}

/// Frames large enough to go from the ring to the output in place (writev) and small ones
/// copied beside them, some VLAN-tagged: `-w -` through a pipe and `-w FILE` hold the same
/// bytes, and pcap_file reads back every frame as it was.
#[test]
fn large_frames_written_in_place_read_back_whole_through_a_file_and_a_pipe() {
    let frames: Vec<Vec<u8>> = (0..3000usize)
        .map(|i| {
            let f = udp4(
                [198, 18, 0, (i % 200) as u8],
                [198, 19, 0, 1],
                1024,
                53,
                (i * 37) % 1400,
            );
            if i % 5 == 0 {
                with_vlan(&f, (i % 4000) as u16)
            } else {
                f
            }
        })
        .collect();
    let input = tmp("inplace-in.pcap");
    write_frames(&input, &frames);
    let file = tmp("inplace-out.pcap");
    let o = zcap(&["-r", input.to_str().unwrap(), "-w", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let piped = zcap(&["-r", input.to_str().unwrap(), "-w", "-"]);
    assert!(piped.status.success(), "{}", stderr(&piped));
    let written = std::fs::read(&file).unwrap();
    assert!(written == piped.stdout, "-w - and -w FILE differ");
    let mut r = pcap_file::pcap::PcapReader::new(&written[..]).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_raw_packet() {
        assert_eq!(p.unwrap().data.as_ref(), &frames[n][..], "frame {n}");
        n += 1;
    }
    assert_eq!(n, frames.len());
}
