//! Embedding the flow cache in another tool: read a pcap or pcapng file (or generate a small
//! demo trace), extract each packet's flow from its headers, track it, print the top flows.
//!
//! ```text
//! cargo run --example embed_flowcache -- FILE.pcap [TOP]
//! cargo run --example embed_flowcache            # a generated demo trace
//! ```

use std::cmp::Reverse;

use zcrx::flowcache::{extract, FlowRecord, FlowStats, FlowTable, LinkType};

struct Trace {
    link: u32,
    packets: Vec<(u64, u32, Vec<u8>)>, // ts ns, original length, bytes
}

fn read(path: &str) -> Result<Trace, Box<dyn std::error::Error>> {
    let data = std::fs::read(path)?;
    let mut packets = Vec::new();
    if data.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let mut r = pcap_file::pcapng::PcapNgReader::new(&data[..])?;
        let mut links: Vec<u32> = Vec::new();
        while let Some(b) = r.next_block() {
            match b? {
                pcap_file::pcapng::Block::InterfaceDescription(i) => links.push(i.linktype.into()),
                pcap_file::pcapng::Block::EnhancedPacket(p) => packets.push((
                    p.timestamp.as_nanos() as u64,
                    p.original_len,
                    p.data.to_vec(),
                )),
                _ => {}
            }
        }
        // One link type per file keeps the example short; mixed-interface files are refused.
        links.dedup();
        if links.len() > 1 {
            return Err("pcapng with interfaces of different link types".into());
        }
        Ok(Trace {
            link: links.first().copied().unwrap_or(1),
            packets,
        })
    } else {
        let mut r = pcap_file::pcap::PcapReader::new(&data[..])?;
        let link = r.header().datalink.into();
        while let Some(p) = r.next_packet() {
            let p = p?;
            packets.push((p.timestamp.as_nanos() as u64, p.orig_len, p.data.to_vec()));
        }
        Ok(Trace { link, packets })
    }
}

fn demo() -> Trace {
    let packets = (0..10_000u32)
        .map(|i| {
            let flow = (i * 7919) % 300; // 300 flows, uneven sizes
            let f = zcrx::flowcache::testdata::udp4(
                [198, 18, 0, 1],
                [198, 18, 1, (flow % 250) as u8],
                1024 + flow as u16,
                53,
                (flow % 9) as usize * 100,
            );
            (u64::from(i) * 1000, f.len() as u32, f)
        })
        .collect();
    Trace { link: 1, packets }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trace = match args.first() {
        Some(path) => read(path).unwrap_or_else(|e| {
            eprintln!("embed_flowcache: {path}: {e}");
            std::process::exit(1)
        }),
        None => demo(),
    };
    let top: usize = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(10);
    let Some(link) = LinkType::from_linktype(trace.link) else {
        eprintln!("embed_flowcache: link type {} is not supported", trace.link);
        std::process::exit(1)
    };
    let mut table = FlowTable::with_capacity(65_536).expect("65 536 flows is within MAX_CAPACITY");
    let mut done: Vec<FlowRecord> = Vec::new();
    let (mut skipped, mut tracked) = (0u64, 0u64);
    for (ts, len, bytes) in &trace.packets {
        match extract(link, bytes, None) {
            Ok(x) => {
                tracked += 1;
                if table.track(x.track_input(x.ip_octets(*len), *ts)).evicted {
                    done.extend(table.drain_evicted());
                }
                done.extend(table.expire(*ts));
            }
            Err(_) => skipped += 1, // not IP, or malformed: counted, not fatal
        }
    }
    done.extend(table.flush());
    // Keys are canonical (both directions one entry): `oriented` puts the initiator first.
    let mut flows: Vec<FlowStats> = done.iter().map(|r| r.stats.oriented()).collect();
    flows.sort_by_key(|s| Reverse(s.total_bytes()));
    println!(
        "{tracked} packets in {} flows ({skipped} not IP or malformed)",
        flows.len()
    );
    for s in flows.iter().take(top) {
        println!(
            "{:<52} {:>7} pkts {:>10} bytes",
            s.key.to_string(),
            s.total_packets(),
            s.total_bytes()
        );
    }
}
