//! Net channels in user space: one stage steers each packet to the consumer that owns its
//! flow; four consumers each print the flows they own.
//!
//! ```text
//! cargo run --example net_channels              # a synthetic ring of 64 UDP flows
//! cargo run --example net_channels -- IFACE N   # N packets from a live interface (root)
//! ```

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use zcrx::capture::{
    BlockSource, Consumer, Consumers, Delivered, Delivery, Hooks, Pipeline, PipelineConfig,
};
use zcrx::flowcache::FlowKey;
use zcrx::ring::frames::UdpFlow;
use zcrx::ring::{Frame, RxRing, SyntheticRing};

const CONSUMERS: usize = 4;

/// A consumer owning some flows: counts packets and bytes per flow, and hands the counts
/// back when the run ends (no shared state, no lock).
#[derive(Default)]
struct PerFlow(BTreeMap<FlowKey, (u64, u64)>);

impl Consumer for PerFlow {
    type Output = BTreeMap<FlowKey, (u64, u64)>;
    fn packet(&mut self, d: &Delivered<'_>) {
        if let Some(key) = d.flow_key() {
            let e = self.0.entry(key.canonical().0).or_default();
            e.0 += 1;
            e.1 += u64::from(d.meta().wire_len);
        }
    }
    fn finish(self) -> Self::Output {
        self.0
    }
}

fn run<S: BlockSource>(source: &S, max: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    let config = PipelineConfig::builder()
        .consumers(Consumers::threads(CONSUMERS))
        .delivery(Delivery::ZeroCopy)
        .max_packets_opt(max)
        .build()
        .unwrap();
    let run = Pipeline::new(source, config).run(|_| PerFlow::default(), Hooks::new())?;
    let stats = run.stats;
    for (i, m) in run.outputs.iter().enumerate() {
        println!(
            "consumer {i}: {} flows, {} packets",
            m.len(),
            stats.consumers[i].packets
        );
        for (key, (p, b)) in m.iter().take(8) {
            println!("    {:<48} {p:>6} pkts {b:>9} bytes", key.to_string());
        }
        if m.len() > 8 {
            println!("    ... and {} more", m.len() - 8);
        }
    }
    println!(
        "stage: {} packets in {} blocks, {:.1} ns/packet, {} batches, {} queue-full waits",
        stats.packets,
        stats.blocks,
        stats.stage_ns_per_packet(),
        stats.batches,
        stats.queue_full
    );
    if let Some(k) = stats.kernel {
        println!(
            "kernel: {} received, {} dropped, {} freezes",
            k.received(),
            k.drops,
            k.freezes
        );
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first() {
        Some(iface) => {
            let n = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
            RxRing::builder(iface.as_str())
                .build()
                .map_err(Into::into)
                .and_then(|ring| run(&ring, Some(n)))
        }
        None => {
            let flows: Vec<UdpFlow> = (0..64u16)
                .map(|i| UdpFlow {
                    src_mac: [2, 0, 0, 0, 0, 1],
                    dst_mac: [2, 0, 0, 0, 0, 2],
                    src_ip: Ipv4Addr::new(198, 18, 0, 1),
                    dst_ip: Ipv4Addr::new(198, 18, 1, i as u8),
                    sport: 40_000 + i,
                    dport: 53,
                    vlan: None,
                })
                .collect();
            let frames = (0..10_000)
                .map(|s| Frame::new(flows[(s * 31) % 64].frame(s as u64, 100 + s % 400)));
            SyntheticRing::builder()
                .block_size(64 << 10)
                .build(frames)
                .map_err(Into::into)
                .and_then(|ring| run(&ring, None))
        }
    };
    if let Err(e) = result {
        eprintln!("net_channels: {e}");
        std::process::exit(1);
    }
}
