//! zcap's offline path, a file in and JSON out (`zcap -r FILE --json` and `--flows --json`):
//! the same reader, link-type checks, snaplen cut, flow tracking and the very JSON and text
//! printers zcap uses (its `print.rs`, compiled in here), with every JSON line parsed back.
//! `capture/tests/zcap.rs` runs the real binary over this target's corpus too.
#![no_main]

#[allow(dead_code)]
#[path = "../../capture/src/bin/zcap/print.rs"]
mod print;

use libfuzzer_sys::fuzz_target;
use zcrx_capture::pcapfile::CaptureFile;
use zcrx_flowcache::{extract, FlowTable, FlowTableConfig, LinkType};

/// zcap's default snaplen.
const SNAPLEN: usize = 262_144;

fn parse(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(file) = CaptureFile::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    let mut table = FlowTable::new(FlowTableConfig {
        capacity: 256,
        seed: Some(7),
        ..Default::default()
    });
    let mut first_linktype = None;
    let mut records = Vec::new();
    for p in file {
        let Ok(p) = p else {
            break;
        };
        let linktype = *first_linktype.get_or_insert(p.linktype);
        if p.linktype != linktype {
            break; // zcap: "interfaces of different link types ... are not supported"
        }
        let Some(link) = LinkType::from_linktype(linktype) else {
            break; // zcap: "link type N is not supported"
        };
        let frame = &p.data[..p.data.len().min(SNAPLEN)];
        if let Ok(x) = extract(link, frame, None) {
            records.extend(table.track(x.key, p.orig_len, p.ts_ns, x.tcp_flags).evicted);
        }
        let v = parse(&print::json(link, p.ts_ns, p.orig_len, frame, None));
        assert_eq!(v["len"], p.orig_len);
        assert_eq!(v["caplen"], frame.len());
        let line = print::line(link, p.ts_ns, p.orig_len, frame, None);
        assert!(!line.contains('\n'), "one line per packet: {line:?}");
    }
    records.extend(table.flush());
    for r in &records {
        let v = parse(&print::flow_json(&r.stats));
        assert!(v["packets"].is_array());
    }
});
