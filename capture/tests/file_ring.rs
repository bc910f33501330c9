//! A capture file streamed into a ring (`pcapfile::FileRing`): every packet in order in
//! bounded memory, the filter applied, a truncated file ending the ring where it breaks
//! with the reason, a stop ending it early.

use std::io::Cursor;

use zcrx_capture::pcapfile::{CaptureFile, FileRing, Format, SaveFile};
use zcrx_capture::ring::frames::{frame_seq, UdpFlow};
use zcrx_capture::{Consumers, Delivered, Hooks, Pipeline, PipelineConfig, StopToken};

/// A pcap of `n` frames of 64 UDP flows, each frame carrying its sequence number.
fn capture(n: u64) -> Vec<u8> {
    let flows: Vec<UdpFlow> = (0..64).map(UdpFlow::synthetic).collect();
    let mut w = SaveFile::new(Vec::new(), Format::Pcap, 1, 65535);
    for i in 0..n {
        let f = flows[(i % 64) as usize].frame(i, 200);
        w.write(1_700_000_000_000_000_000 + i, 200, &f, None)
            .unwrap();
    }
    w.flush().unwrap();
    w.get_ref().clone()
}

fn file(bytes: Vec<u8>) -> CaptureFile {
    CaptureFile::from_reader("test.pcap", Cursor::new(bytes)).unwrap()
}

/// The sequence numbers a run over `ring` delivered, in order (one inline consumer).
fn sequence(ring: &FileRing) -> Vec<u64> {
    let config = PipelineConfig::builder()
        .consumers(Consumers::Inline)
        .build()
        .unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    Pipeline::new(ring, config)
        .run(
            |_| |d: &Delivered<'_>| seen.lock().unwrap().push(frame_seq(d.data()).unwrap()),
            Hooks::new(),
        )
        .unwrap();
    seen.into_inner().unwrap()
}

#[test]
fn a_file_streams_through_a_ring_of_four_blocks_in_order() {
    // 50 000 frames of 200 bytes: a file of 10.8 MB through 4 blocks of 1 MiB.
    let n = 50_000;
    let bytes = capture(n);
    assert_eq!(bytes.len(), 24 + 50_000 * 216);
    let ring = FileRing::builder()
        .snaplen(65535)
        .build(file(bytes))
        .unwrap();
    let map = ring.ring().map();
    assert_eq!(map.block_count(), 4);
    assert!(map.block_count() * map.block_size() <= 4 << 20);
    assert_eq!(ring.linktype(), Some(1));
    assert_eq!(sequence(&ring), (0..n).collect::<Vec<_>>());
    assert_eq!(ring.packets_read(), n);
    assert!(ring.take_error().is_none());
}

#[test]
fn the_filter_keeps_what_it_keeps_and_every_packet_counts_as_read() {
    let ring = FileRing::builder()
        .keep(|p| frame_seq(&p.data).unwrap() % 3 == 0)
        .build(file(capture(3000)))
        .unwrap();
    assert_eq!(sequence(&ring), (0..3000).step_by(3).collect::<Vec<_>>());
    assert_eq!(ring.packets_read(), 3000);
}

#[test]
fn a_truncated_file_ends_the_ring_where_it_breaks_and_says_why() {
    let whole = capture(100);
    // Each record is 16 + 200 bytes after the 24-byte header: cut record 58 in its data.
    let at = 24 + 57 * 216;
    let ring = FileRing::builder()
        .build(file(whole[..at + 16 + 77].to_vec()))
        .unwrap();
    assert_eq!(sequence(&ring), (0..57).collect::<Vec<_>>());
    let e = ring.take_error().expect("the cut is reported").to_string();
    assert!(
        e.contains(&format!(
            "test.pcap: truncated or malformed after 57 packets: record 58 at byte {at}: packet data cut short: 200 bytes expected, 77 present"
        )),
        "{e}"
    );
    // A file cut inside its first packet is refused when the ring is built.
    let e = FileRing::builder()
        .build(file(whole[..24 + 10].to_vec()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("record 1 at byte 24: record header cut short"),
        "{e}"
    );
    // A file without packets is an empty ring, with no link type.
    let ring = FileRing::builder()
        .build(file(whole[..24].to_vec()))
        .unwrap();
    assert_eq!(ring.linktype(), None);
    assert!(sequence(&ring).is_empty());
}

#[test]
fn a_stop_ends_the_file_at_the_next_packet() {
    let stop = StopToken::new();
    let ring = FileRing::builder()
        .stop_on(&stop)
        .build(file(capture(1000)))
        .unwrap();
    stop.stop();
    assert!(sequence(&ring).is_empty());
    assert!(ring.take_error().is_none(), "a stop is no failure");
}

/// Flows and non-IP packets a pipeline over `ring` counted, `link` named or not.
fn flows_and_non_ip(
    ring: &FileRing,
    link: Option<zcrx_capture::flowcache::LinkType>,
) -> (u64, u64) {
    let mut b = PipelineConfig::builder().consumers(Consumers::Inline);
    if let Some(link) = link {
        b = b.link(link);
    }
    let run = Pipeline::new(ring, b.build().unwrap())
        .run(|_| |_: &Delivered<'_>| {}, Hooks::new())
        .unwrap();
    (run.stats.flows_created, run.stats.non_ip)
}

#[test]
fn a_pipeline_takes_the_files_link_type_unless_its_configuration_names_one() {
    use zcrx_capture::flowcache::LinkType;
    // Raw IP (LINKTYPE_RAW): the Ethernet frames without their 14-byte header.
    let raw = || {
        let flows: Vec<UdpFlow> = (0..64).map(UdpFlow::synthetic).collect();
        let mut w = SaveFile::new(Vec::new(), Format::Pcap, 101, 65535);
        for i in 0..640u64 {
            let f = flows[(i % 64) as usize].frame(i, 200);
            w.write(1_700_000_000_000_000_000 + i, 186, &f[14..], None)
                .unwrap();
        }
        w.flush().unwrap();
        FileRing::builder()
            .build(file(w.get_ref().clone()))
            .unwrap()
    };
    assert_eq!(
        flows_and_non_ip(&raw(), None),
        (64, 0),
        "the file's link type"
    );
    assert_eq!(
        flows_and_non_ip(&raw(), Some(LinkType::RawIp)),
        (64, 0),
        "named, the same"
    );
    // Named otherwise, the configuration wins: raw IP read as Ethernet is not IP.
    let (_, non_ip) = flows_and_non_ip(&raw(), Some(LinkType::Ethernet));
    assert!(non_ip > 0, "Ethernet named: {non_ip} non-IP");
}
