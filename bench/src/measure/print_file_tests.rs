use super::*;

/// A little-endian microsecond pcap with records at the given (seconds, microseconds), each
/// carrying `len` bytes of its index.
fn capture(stamps: &[(u32, u32)], len: usize) -> Vec<u8> {
    let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
    f.extend([0; 8]);
    f.extend(65_535u32.to_le_bytes());
    f.extend(1u32.to_le_bytes());
    for (i, (s, us)) in stamps.iter().enumerate() {
        f.extend(s.to_le_bytes());
        f.extend(us.to_le_bytes());
        f.extend((len as u32).to_le_bytes());
        f.extend((len as u32 + 4).to_le_bytes());
        f.extend(vec![i as u8; len]);
    }
    f
}

fn stamps(data: &[u8]) -> Vec<u64> {
    let p = Pcap::parse(data).unwrap();
    p.records.iter().map(|r| p.stamp(r)).collect()
}

#[test]
fn a_capture_is_repeated_to_the_count_with_increasing_stamps() {
    let small = capture(&[(100, 0), (100, 500_000), (101, 0)], 6);
    let mut big = Vec::new();
    assert_eq!(repeat_capture(&small, 7, &mut big).unwrap(), 7);
    assert_eq!(count_packets(&big).unwrap(), 7);
    assert_eq!(big[..24], small[..24]);
    let t = stamps(&big);
    // The span is 1 s, plus 1 ms between copies.
    let copy = 1_001_000;
    assert_eq!(t[..3], [100_000_000, 100_500_000, 101_000_000]);
    assert_eq!(
        t[3..6],
        [100_000_000 + copy, 100_500_000 + copy, 101_000_000 + copy]
    );
    assert_eq!(t[6], 100_000_000 + 2 * copy);
    // The packets' bytes and lengths are the originals'.
    let p = Pcap::parse(&big).unwrap();
    assert_eq!(
        p.records[4][8..],
        Pcap::parse(&small).unwrap().records[1][8..]
    );
}

#[test]
fn stamps_out_of_order_in_the_source_still_only_increase() {
    let small = capture(&[(10, 5), (10, 3), (10, 3)], 2);
    let mut big = Vec::new();
    repeat_capture(&small, 6, &mut big).unwrap();
    let t = stamps(&big);
    assert!(t.windows(2).all(|w| w[1] > w[0]), "{t:?}");
}

#[test]
fn what_is_not_a_whole_pcap_is_refused() {
    let small = capture(&[(1, 0)], 10);
    let err = count_packets(&small[..small.len() - 1]).unwrap_err();
    assert!(err.to_string().contains("cut"), "{err}");
    let err = count_packets(&[0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]).unwrap_err();
    assert!(err.to_string().contains("not a pcap"), "{err}");
    let empty = capture(&[], 0);
    assert!(repeat_capture(&empty, 3, Vec::new()).is_err());
}

#[test]
fn big_endian_and_nanosecond_captures_are_read() {
    let mut f = vec![0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4];
    f.extend([0; 8]);
    f.extend(65_535u32.to_be_bytes());
    f.extend(1u32.to_be_bytes());
    f.extend(7u32.to_be_bytes());
    f.extend(9u32.to_be_bytes());
    f.extend(3u32.to_be_bytes());
    f.extend(3u32.to_be_bytes());
    f.extend([1, 2, 3]);
    let p = Pcap::parse(&f).unwrap();
    assert!(p.big_endian);
    assert_eq!(p.stamp(p.records[0]), 7_000_000_009);
}

#[test]
fn the_command_lines_are_what_the_claim_names() {
    assert_eq!(
        command("zcap", "/bin/zcap", "", "/x.pcap").join(" "),
        "/bin/zcap -n -r /x.pcap"
    );
    assert_eq!(
        command("tcpdump", "/bin/zcap", "-v", "/x.pcap").join(" "),
        "tcpdump -n -v -r /x.pcap"
    );
}

fn run(tool: &str, flags: &str, round: usize, ns: f64) -> PrintFileRun {
    PrintFileRun {
        tool: tool.into(),
        flags: flags.into(),
        round,
        user_ns: 0,
        sys_ns: 0,
        wall_ns: 0,
        cpu_ns_per_pkt: ns,
    }
}

#[test]
fn the_ratio_is_of_the_medians_and_of_the_rounds() {
    let runs = [
        run("zcap", "", 0, 100.0),
        run("tcpdump", "", 0, 400.0),
        run("zcap", "", 1, 300.0),
        run("tcpdump", "", 1, 500.0),
        run("zcap", "", 2, 200.0),
        run("tcpdump", "", 2, 1000.0),
        run("zcap", "-v", 0, 10.0),
    ];
    let s = summarize(&runs);
    // -v has no tcpdump run: no summary.
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].zcap, s[0].tcpdump), (200.0, 500.0));
    assert_eq!(s[0].ratio, 0.4);
    // 0.25, 0.6, 0.2: the median is 0.25.
    assert_eq!(s[0].paired, 0.25);
    let report = PrintFileReport {
        pcap: "/x.pcap".into(),
        from: None,
        packets: 1000,
        bytes: 1,
        tz: Some("UTC".into()),
        runs: runs.to_vec(),
    };
    let t = text(&report);
    assert!(
        t.contains("-n: zcap 200 ns/pkt, tcpdump 500: 0.400x"),
        "{t}"
    );
    assert!(t.contains("zcap -n -v"), "{t}");
    assert!(t.contains("TZ=UTC"), "{t}");
}
