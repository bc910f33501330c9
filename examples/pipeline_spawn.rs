//! A pipeline on a thread of its own: `Pipeline::spawn` over a live ring on `lo`, two
//! consumer threads counting the UDP packets of one port; this thread sends them, stops the
//! run through its handle and checks that every packet arrived exactly once. Needs
//! CAP_NET_RAW (the test command runs it as root). Bounded in time: the run stops itself
//! after 30 s even if the stop never came.
//!
//! ```text
//! cargo run --example pipeline_spawn [COUNT]    # COUNT packets (default 2000)
//! ```

use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use zcrx::capture::ring::RxRing;
use zcrx::capture::{Consumer, Consumers, Delivered, Hooks, Pipeline, PipelineConfig};

/// Counts the packets to `port` among the flows it owns.
struct PortCount {
    port: u16,
    packets: u64,
}

impl Consumer for PortCount {
    type Output = u64;
    fn packet(&mut self, d: &Delivered<'_>) {
        if d.flow_key().is_some_and(|k| k.dport() == self.port) {
            self.packets += 1;
        }
    }
    fn finish(self) -> u64 {
        self.packets
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: u64 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 2000,
    };
    // On `lo` every packet passes twice, out and in: the ring keeps the incoming copy only.
    let ring = RxRing::builder("lo")
        .ignore_outgoing(true)
        .block_timeout(Duration::from_millis(10))
        .build()?;
    let receiver = UdpSocket::bind("127.0.0.1:0")?;
    let port = receiver.local_addr()?.port();
    let config = PipelineConfig::builder()
        .consumers(Consumers::threads(2))
        .clock_when_quiet(true)
        .run_for(Duration::from_secs(30))
        .build()?;
    let run = Pipeline::spawn(
        Arc::new(ring),
        config,
        move |_| PortCount { port, packets: 0 },
        Hooks::new,
    )?;
    let sender = UdpSocket::bind("127.0.0.1:0")?;
    for seq in 0..count {
        sender.send_to(&seq.to_be_bytes(), ("127.0.0.1", port))?;
    }
    // The stop still delivers what the kernel filled (waiting out the block timeout).
    std::thread::sleep(Duration::from_millis(50));
    run.stop();
    let run = run.join()?;
    let received: u64 = run.outputs.iter().sum();
    println!(
        "sent {count}, received {received} (per consumer {:?}); the stage took {} packets in {} blocks",
        run.outputs, run.stats.packets, run.stats.blocks
    );
    if let Some(k) = run.stats.kernel {
        println!("kernel: {} packets, {} drops", k.packets, k.drops);
        if k.drops > 0 {
            return Err(format!("the kernel dropped {} packets", k.drops).into());
        }
    }
    if received != count {
        return Err(format!("sent {count} packets to port {port}, received {received}").into());
    }
    Ok(())
}
