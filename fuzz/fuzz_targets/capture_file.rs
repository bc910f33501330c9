//! The pcap/pcapng reader over arbitrary bytes: a packet or a clear error, never a panic,
//! never a packet longer on the wire than captured the other way round; then the frames are
//! laid into a synthetic ring (as `zcap -r` and the benches do) and walked back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_capture::pcapfile::CaptureFile;
use zcrx_ring::SyntheticRing;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = CaptureFile::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    let mut frames = Vec::new();
    for p in file {
        let Ok(p) = p else {
            break; // an error ends the file; what came before stays valid
        };
        assert!(p.orig_len as usize >= p.data.len());
        frames.push(p.into_frame());
        if frames.len() == 256 {
            break;
        }
    }
    let want: Vec<(usize, u32)> = frames
        .iter()
        .map(|f| (f.data.len().min(65_536), f.wire_len))
        .collect();
    let ring = SyntheticRing::builder()
        .block_size(1 << 17)
        .snaplen(65_536)
        .build(frames.clone())
        .expect("frames from a file always fit 128 KiB blocks");
    let mut got = Vec::new();
    while let Some(block) = ring.next_block() {
        for p in block.packets() {
            let p = p.expect("the synthetic ring lays out valid blocks");
            got.push((p.data().len(), p.wire_len()));
        }
    }
    assert_eq!(got, want);
});
