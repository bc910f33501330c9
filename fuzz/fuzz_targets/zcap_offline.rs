//! zcap's offline path, a file in and JSON out (`zcap -r FILE --json` and `--flows --json`):
//! the same reader and streaming ring (`FileRing`, zcap's geometry), the pipeline's stage with
//! an inline consumer and flow tracking (TCP states followed, as for `--flows`), and the very
//! JSON and text printers zcap uses (its library's `print`), with every JSON line
//! parsed back; every packet also goes through `--names`' book (its library's `names`), whose names
//! go into the flows' JSON.
//! `zcap/tests/end_to_end.rs` runs the real binary over this target's corpus too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcap::{names, print};
use zcrx_capture::pcapfile::{CaptureFile, FileRing};
use zcrx_capture::{Consumers, Delivered, Hooks, Pipeline, PipelineConfig, Steering};
use zcrx_flowcache::{FlowTableConfig, LinkType};

/// zcap's default snaplen.
const SNAPLEN: u32 = 262_144;

fn parse(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(file) = CaptureFile::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    // zcap's ring: the file streamed, stopping at an error or a packet of another link type.
    let Ok(ring) = FileRing::builder()
        .snaplen(SNAPLEN)
        .block_count(4)
        .build(file)
    else {
        return;
    };
    let Some(linktype) = ring.linktype() else {
        return;
    };
    let Some(link) = LinkType::from_linktype(linktype) else {
        return; // zcap: "link type N is not supported"
    };
    let config = PipelineConfig::builder()
        .consumers(Consumers::Inline)
        // zcap --flows: the table follows TCP states.
        .steering(Steering::Flows(
            FlowTableConfig::with_capacity(256)
                .with_seed(Some(7))
                .with_tcp_state(true),
        ))
        .link(link)
        .build()
        .unwrap();
    let mut records = Vec::new();
    let book = names::NamesBook::new(256, link);
    let book = &book;
    let run = Pipeline::new(&ring, config)
        .run(
            |_| {
                move |d: &Delivered<'_>| {
                    book.packet(d);
                    let m = d.meta();
                    let v = parse(&print::json(link, m.ts_ns, m.wire_len, d.data(), None));
                    assert_eq!(v["len"], m.wire_len);
                    assert_eq!(v["caplen"], d.data().len());
                    let stamp = print::Stamp::default().format(m.ts_ns, m.ts_ns, m.ts_ns);
                    // tcpdump's lines at default and -q: the stamp first (more lines may
                    // follow: a VXLAN packet's inner frame, an unknown ICMPv6 type's bytes).
                    for quiet in [false, true] {
                        let detail = print::Detail {
                            quiet,
                            ..print::Detail::default()
                        };
                        let line =
                            print::line_stamped(&stamp, link, m.wire_len, d.data(), None, &detail);
                        assert!(line.starts_with(&stamp), "{line:?}");
                    }
                    // Every printing flag at once (-e -vv -XX): no panic on any input.
                    let all = print::Detail {
                        link: true,
                        verbose: 2,
                        hex: 0,
                        hex_ascii: 2,
                        ascii: false,
                        ..print::Detail::default()
                    };
                    let _ = print::line_stamped(&stamp, link, m.wire_len, d.data(), None, &all);
                    let ascii = print::Detail { ascii: true, ..all };
                    let _ = print::line_stamped(&stamp, link, m.wire_len, d.data(), None, &ascii);
                }
            },
            Hooks::new().on_flow_ended(|e| records.push((*e, book.ended(&e.record)))),
        )
        .expect("a ring of a file never fails");
    assert_eq!(run.stats.packets as usize, ring.ring().packets());
    assert_eq!(ring.ring().map().blocks_held(), 0);
    // Every flow ended: the book is empty.
    assert_eq!(book.counts().entries, 0);
    for (e, n) in &records {
        let r = &e.record;
        let v = parse(&print::flow_json(
            &r.stats,
            Some(r.end),
            0,
            e.tcp.as_ref(),
            n.as_deref(),
        ));
        if let Some(n) = n {
            let _ = names::short_name(n);
        }
        assert!(v["packets"].is_array() && v["end"].is_string());
        // A state only for TCP flows, its history in Zeek's letters.
        if let Some(t) = &e.tcp {
            assert_eq!(r.stats.key.proto(), zcrx_flowcache::ipproto::TCP);
            assert_eq!(v["conn_state"], t.conn_state().name());
            assert!(t
                .history()
                .bytes()
                .all(|c| b"shadfrtwiqSHADFRTWIQ".contains(&c)));
        }
    }
});
