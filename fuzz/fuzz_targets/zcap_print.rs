//! zcap's packet printer (tcpdump's lines) over hostile frames, at every verbosity and
//! output mode: the first byte picks the link type, the second the flags (-q, -e, -v to
//! -vvv, -x/-X/-A, -S, -K, names); the rest is a run of frames, each behind a 16-bit length,
//! printed by one printer, so that TCP's conversation table sees them in turn. No input may
//! panic, hang or grow the table past its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcap::dissect::tcp_seq::Seqs;
use zcap::print::{Detail, LinePrinter};
use zcrx_flowcache::LinkType;

const LINKS: [LinkType; 5] = [
    LinkType::Ethernet,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::Ipv4,
    LinkType::Ipv6,
];

fuzz_target!(|data: &[u8]| {
    let (Some(&l), Some(&f)) = (data.first(), data.get(1)) else {
        return;
    };
    let link = LINKS[usize::from(l) % LINKS.len()];
    let detail = Detail {
        quiet: f & 0x01 != 0,
        link: f & 0x02 != 0,
        verbose: (f >> 2) & 3,
        hex: u8::from(f & 0x30 == 0x10) * (1 + (l >> 7)),
        hex_ascii: u8::from(f & 0x30 == 0x20) * (1 + (l >> 7)),
        ascii: f & 0x30 == 0x30,
        absolute: f & 0x40 != 0,
        no_checksums: l & 0x40 != 0,
        names: false,
        short_names: false,
        local_v4: None,
    };
    let mut printer = LinePrinter::new(detail);
    let mut rest = &data[2..];
    while rest.len() >= 2 {
        let n = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        rest = &rest[2..];
        let frame = &rest[..n.min(rest.len())];
        rest = &rest[frame.len()..];
        // The wire length: the frame's, or more (a snapshot length cut it).
        let wire = frame.len() as u32 + u32::from(l & 0x20 != 0) * 100;
        let line = printer.line("00:00:00.000000", link, wire, frame, None);
        assert!(line.starts_with("00:00:00.000000 "), "{line:?}");
        assert!(printer.conversations() <= Seqs::CAPACITY);
    }
});
