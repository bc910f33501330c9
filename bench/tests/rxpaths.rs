//! The receive paths a user would pick instead, for real (root, netns): sockets-gro,
//! sockets-recvmmsg-busy and af-xdp-busy deliver every frame and say what GRO and busy
//! polling did; `tcp-rx` reads every byte sent, maps pages in zerocopy and copies in recv.
//! Under `CI=true` a skip is a failure.

mod common;

use std::sync::Mutex;

use common::{read_report, rxbench_ok, scratch, usage_error};

/// The lab tests one at a time: two runs sharing the two CPUs would lose frames the test
/// expects delivered, or keep busy polling from engaging.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn gro_and_busy_polling_modes_deliver_every_frame_and_report_what_the_kernel_did() {
    zcrx_ring::require!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("rxpaths");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("report.json");
    // Four flows (a veth gives no receive hash, so GRO holds at most 8 flows at once: with
    // many interleaved flows it coalesces nothing), 320 frames: 80 a socket, a burst its
    // default receive buffer holds even at 1400 B (about 2.3 KB of it a datagram), so nothing
    // is lost while nothing paces the generator.
    rxbench_ok(&[
        "--modes".as_ref(),
        "sockets-gro,sockets-recvmmsg-busy,af-xdp-busy".as_ref(),
        "--sizes".as_ref(),
        "64,1400".as_ref(),
        "--flows".as_ref(),
        "4".as_ref(),
        "--packets".as_ref(),
        "320".as_ref(),
        "--no-copy".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    let report = read_report(&json);
    let results = report["results"].as_array().unwrap();
    assert!(
        report["skipped"].as_array().unwrap().is_empty(),
        "{}",
        report["skipped"]
    );
    assert_eq!(results.len(), 6, "three modes at two sizes");
    for r in results {
        let mode = r["mode"].as_str().unwrap();
        let size = r["frame_bytes"].as_u64().unwrap();
        let sent = r["sent"].as_u64().unwrap();
        let delivered = r["delivered"].as_u64().unwrap();
        assert_eq!(delivered, sent, "{mode} at {size} B: {r}");
        let path = &r["path"];
        let n = |k: &str| path[k].as_u64().unwrap();
        eprintln!(
            "{mode} at {size} B: {} datagrams in {} GRO buffers, BusyPollRxPackets +{}",
            n("gro_datagrams"),
            n("gro_buffers"),
            n("busy_poll_rx_packets")
        );
        if mode == "sockets-gro" {
            // Every datagram split out of a buffer is a whole lab datagram (its length and
            // magic), and the kernel did coalesce: fewer buffers than datagrams.
            assert_eq!(n("gro_datagrams"), delivered, "{r}");
            assert_eq!(n("gro_misfits"), 0, "{r}");
            assert!(n("gro_buffers") < n("gro_datagrams"), "no coalescing: {r}");
            assert!(n("gro_buffers") > 0);
        }
        if mode.ends_with("-busy") {
            // The NAPI id the sockets recorded: the sockets have one (the veth's NAPI); the
            // AF_XDP sockets of a veth get none, so busy polling cannot engage for them.
            if mode == "sockets-recvmmsg-busy" {
                assert!(n("napi_id") > 0, "{r}");
            }
        }
    }
    // Busy polling engages once the receiver keeps up with a stream rather than a burst the
    // NAPI has already queued: 40 000 frames (losses allowed, but every frame accounted).
    rxbench_ok(&[
        "--modes".as_ref(),
        "sockets-recvmmsg-busy".as_ref(),
        "--sizes".as_ref(),
        "64".as_ref(),
        "--flows".as_ref(),
        "4".as_ref(),
        "--packets".as_ref(),
        "40000".as_ref(),
        "--no-copy".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    let report = read_report(&json);
    let r = &report["results"][0];
    let n = |k: &str| r[k].as_u64().unwrap();
    assert_eq!(n("delivered") + n("dropped"), n("sent"), "{r}");
    let polled = r["path"]["busy_poll_rx_packets"].as_u64().unwrap();
    eprintln!(
        "sockets-recvmmsg-busy, 40 000 frames: BusyPollRxPackets +{polled} of {} delivered",
        n("delivered")
    );
    assert!(polled > 0, "busy polling did not engage: {r}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tcp_rx_reads_every_byte_sent_and_zerocopy_maps_pages() {
    // --verify: every byte checked, and the connections read to their end once the sender
    // stops, against what it sent (rxbench itself fails on a difference).
    zcrx_ring::require!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("tcp-rx");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("report.json");
    let stdout = rxbench_ok(&[
        "tcp-rx".as_ref(),
        "--conns".as_ref(),
        "1,3".as_ref(),
        "--reads".as_ref(),
        "4k,64k".as_ref(),
        "--secs".as_ref(),
        "0.3".as_ref(),
        "--verify".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
        "--svg".as_ref(),
        dir.join("svg").as_os_str(),
    ]);
    assert!(stdout.contains("TCP_ZEROCOPY_RECEIVE"), "{stdout}");
    let report = read_report(&json);
    let t = &report["tcp_rx"];
    assert_eq!(t["verified"].as_bool(), Some(true));
    // The MSS the connections got: whole pages of payload.
    assert_eq!(t["mss"].as_u64().unwrap() % 4096, 0, "{t}");
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 2 * 2 * 2, "two methods, conns and reads");
    for p in points {
        let n = |k: &str| p[k].as_u64().unwrap();
        let share = p["mapped_share"].as_f64().unwrap();
        eprintln!(
            "{} {} conns {} B: {} bytes, {:.1}% mapped, {} TLB shootdowns",
            p["method"],
            p["conns"],
            p["read_bytes"],
            n("bytes"),
            100.0 * share,
            n("tlb_shootdowns")
        );
        assert!(n("bytes") > 0, "{p}");
        // Every byte counted once, as mapped or as copied, and every byte's content checked.
        assert_eq!(n("mapped_bytes") + n("copied_bytes"), n("bytes"), "{p}");
        assert_eq!(n("checked_bytes"), n("bytes"), "{p}");
        // Every byte sent was read: in the window, then to each connection's end.
        assert_eq!(n("bytes") + n("drained_bytes"), n("sent_bytes"), "{p}");
        match p["method"].as_str().unwrap() {
            "recv" => assert_eq!(n("mapped_bytes"), 0, "{p}"),
            // Pages really mapped, not silently copied: all but the tails.
            "zerocopy" => assert!(share > 0.9, "{p}"),
            m => panic!("unknown method {m}"),
        }
        assert!(p["rx_thread_ns_per_kib"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert!(dir.join("svg/tcp-rx-cpu-per-kib.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_tcp_rx_arguments_are_refused() {
    usage_error(
        &["tcp-rx", "--reads", "5000"],
        "--reads",
        &["not a multiple of 4096"],
    );
    usage_error(&["tcp-rx", "--reads", "4q"], "--reads", &["not a size"]);
    usage_error(
        &["tcp-rx", "--conns", "0"],
        "--conns",
        &["0 is not in 1..=10000"],
    );
    usage_error(
        &["tcp-rx", "--secs", "0"],
        "--secs",
        &["0 is not in 0.1..=600"],
    );
}

/// The new modes in a capacity search (the saturation study's phases search every mode),
/// briefly: every trial accounts for every frame and says what GRO and busy polling did.
#[test]
fn capacity_trials_of_the_new_modes_say_what_the_kernel_did() {
    zcrx_ring::require!();
    if !common::xdp_live_allowed("capacity_trials_of_the_new_modes_say_what_the_kernel_did") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("rxpaths-capacity");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("report.json");
    rxbench_ok(&[
        "capacity".as_ref(),
        "--modes".as_ref(),
        "sockets-gro,sockets-recvmmsg-busy,af-xdp-busy".as_ref(),
        "--sizes".as_ref(),
        "64".as_ref(),
        "--flows".as_ref(),
        "4".as_ref(),
        "--losses".as_ref(),
        "0".as_ref(),
        "--seconds".as_ref(),
        "0.1".as_ref(),
        "--searches".as_ref(),
        "1".as_ref(),
        "--steps".as_ref(),
        "1".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
        "--markdown".as_ref(),
        dir.join("capacity.md").as_os_str(),
        "--svg".as_ref(),
        dir.join("svg").as_os_str(),
    ]);
    let report = read_report(&json);
    let points = report["capacity"].as_array().unwrap();
    let modes: Vec<&str> = points.iter().map(|p| p["mode"].as_str().unwrap()).collect();
    assert_eq!(
        modes,
        ["sockets-gro", "sockets-recvmmsg-busy", "af-xdp-busy"],
        "{points:?}"
    );
    let md = std::fs::read_to_string(dir.join("capacity.md")).unwrap();
    for m in &modes {
        assert!(md.contains(m), "{m} not in the markdown: {md}");
    }
    assert!(dir.join("svg/capacity-drop-curve-64B.svg").exists());
    for p in points {
        let mode = p["mode"].as_str().unwrap();
        for t in p["trials"].as_array().unwrap() {
            let n = |k: &str| t[k].as_u64().unwrap();
            assert_eq!(n("delivered") + n("lost"), n("sent"), "{t}");
            let path = &t["path"];
            let pn = |k: &str| path[k].as_u64().unwrap();
            match mode {
                // Every datagram read (late ones too) split right.
                "sockets-gro" => {
                    assert!(pn("gro_datagrams") >= n("delivered"), "{t}");
                    assert_eq!(pn("gro_misfits"), 0, "{t}");
                }
                "sockets-recvmmsg-busy" => assert!(pn("napi_id") > 0, "{t}"),
                // A veth's AF_XDP sockets get no NAPI id.
                _ => assert_eq!(pn("napi_id"), 0, "{t}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
