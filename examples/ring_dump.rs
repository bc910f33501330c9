//! Open a TPACKET_V3 ring on an interface and print its packets and the kernel's counters.
//!
//! ```text
//! ring_dump IFACE [COUNT]     capture COUNT packets (default 20) on IFACE (needs CAP_NET_RAW)
//! ring_dump --lab [COUNT]     build a netns lab, send COUNT frames over 256 UDP flows with the
//!                             TX ring, and dump them from a ring in the other namespace
//! ```

use std::time::{Duration, Instant};

use zcrx::ring::frames::UdpFlow;
use zcrx::ring::lab::Lab;
use zcrx::ring::{RingError, RxRing, TxRing};

fn usage() -> ! {
    eprintln!("usage: ring_dump IFACE [COUNT] | ring_dump --lab [COUNT]");
    std::process::exit(2)
}

fn dump(ring: &RxRing, count: usize, idle: Duration) -> Result<usize, RingError> {
    let mut seen = 0;
    let mut last = Instant::now();
    while seen < count && last.elapsed() < idle {
        let Some(block) = ring.next_block(Duration::from_millis(100))? else {
            continue;
        };
        last = Instant::now();
        let view = block.view().map_err(|e| RingError::Block {
            index: block.index(),
            source: e,
        })?;
        println!(
            "block {:>3} seq {:>5}: {} packets, {} bytes{}",
            block.index(),
            view.seq_num(),
            view.num_packets(),
            view.blk_len(),
            if view.timed_out() {
                " (retired by timer)"
            } else {
                ""
            }
        );
        for p in block.packets() {
            let p = p.map_err(|e| RingError::Block {
                index: block.index(),
                source: e,
            })?;
            if seen < count {
                let head: String = p
                    .data()
                    .iter()
                    .take(24)
                    .map(|b| format!("{b:02x}"))
                    .collect();
                println!(
                    "  {}.{:09} len {:>5} cap {:>5}{}{} {head}",
                    p.ts_ns() / 1_000_000_000,
                    p.ts_ns() % 1_000_000_000,
                    p.wire_len(),
                    p.caplen(),
                    p.vlan_tci()
                        .map(|t| format!(" vlan {}", t & 0xfff))
                        .unwrap_or_default(),
                    if p.is_truncated() { " truncated" } else { "" },
                );
            }
            seen += 1;
        }
    }
    let s = ring.stats()?;
    println!(
        "ring stats: {} passed the filter, {} received, {} dropped, {} freezes",
        s.packets,
        s.received(),
        s.drops,
        s.freezes
    );
    Ok(seen)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ring_dump: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(first) = args.first() else { usage() };
    let count: usize = match args.get(1) {
        Some(c) => c.parse().unwrap_or_else(|_| usage()),
        None => 20,
    };
    if first == "--lab" {
        let lab = Lab::new()?;
        println!(
            "lab: {} ({}) <-veth-> {} ({})",
            lab.a.iface, lab.a.netns, lab.b.iface, lab.b.netns
        );
        let iface = lab.b.iface.clone();
        let ring = lab.b.run(move || RxRing::builder(iface).build())??;
        let iface = lab.a.iface.clone();
        let mut tx = lab.a.run(move || TxRing::builder(iface).build())??;
        let flows: Vec<UdpFlow> = (0..256)
            .map(|i| UdpFlow {
                src_mac: lab.a.mac,
                dst_mac: lab.b.mac,
                src_ip: lab.a.ip,
                dst_ip: lab.b.ip,
                sport: 20_000 + i,
                dport: 9000,
                vlan: None,
            })
            .collect();
        let frames: Vec<Vec<u8>> = (0..count)
            .map(|s| flows[s % flows.len()].frame(s as u64, 128))
            .collect();
        let sent = tx.send_batch(frames.iter().map(|f| f.as_slice()))?;
        println!("sent {sent} frames over {} flows", flows.len());
        let got = dump(&ring, count, Duration::from_secs(1))?;
        println!("dumped {got} packets");
    } else {
        let got = dump(
            &RxRing::builder(first.as_str()).build()?,
            count,
            Duration::from_secs(10),
        )?;
        println!("dumped {got} packets");
    }
    Ok(())
}
