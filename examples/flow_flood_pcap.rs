//! Writes a pcap of N distinct UDP flows, one 60-byte packet each, 1 µs apart, sources spread
//! over the benchmarking range 198.18.0.0/15: input for `scripts/ipfix-flood.sh`.
//!
//! `cargo run --release --example flow_flood_pcap --features test-support -- OUT.pcap [N]`

use std::io::BufWriter;
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use zcrx_flowcache::testdata::udp4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: flow_flood_pcap OUT.pcap [FLOWS]")?;
    let flows: u32 = match args.next() {
        Some(n) => n.parse().map_err(|_| format!("FLOWS {n:?}: a number"))?,
        None => 1_000_000,
    };
    let mut w = PcapWriter::new(BufWriter::new(std::fs::File::create(&path)?))?;
    for i in 0..flows {
        // 131 072 addresses x 64 source ports: distinct for up to 8M flows.
        let host = i % (1 << 17);
        let src = [198, 18 + (host >> 16) as u8, (host >> 8) as u8, host as u8];
        let sport = 20_000 + (i >> 17) as u16;
        let frame = udp4(src, [198, 19, 255, 1], sport, 4000, 18);
        let ts = Duration::from_secs(1_700_000_000) + Duration::from_micros(u64::from(i));
        w.write_packet(&PcapPacket::new(ts, frame.len() as u32, &frame))?;
    }
    eprintln!("{flows} flows written to {path}");
    Ok(())
}
