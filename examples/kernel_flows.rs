//! Flows counted in the kernel: `KernelFlows::attach` puts the flow-counting eBPF program at
//! `lo`'s tcx ingress, this thread sends UDP from a few sockets to one port for a while and
//! reads the map every 200 ms, as a sensor would (a 500 ms active timeout, so the long flows
//! are reported while they last), then flushes; it prints each record of its own flows and
//! checks that their packets and bytes add up to what was sent. No packet is captured: the
//! program counts and passes every packet on. Needs Linux 6.6+ and CAP_BPF, CAP_PERFMON and
//! CAP_NET_ADMIN (the test command runs it as root). Other traffic on `lo` is counted too;
//! only the example's port is checked.
//!
//! ```text
//! cargo run --example kernel_flows [DATAGRAMS]   # per flow (default 500), 3 flows
//! ```

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use zcrx::capture::flowcache::{FlowRecord, Timeouts};
use zcrx::kflows::{KernelFlows, KernelFlowsConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let per_flow: u64 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 500,
    };
    let mut timeouts = Timeouts::default();
    timeouts.active = Some(Duration::from_millis(500));
    // On `lo` every packet passes twice, out and in: ingress alone counts each once.
    let mut flows = KernelFlows::attach(
        "lo",
        KernelFlowsConfig::new()
            .ingress(true)
            .max_entries(4096)
            .timeouts(timeouts),
    )?;
    let receiver = UdpSocket::bind("127.0.0.1:0")?;
    let port = receiver.local_addr()?.port();
    let senders = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    let payload = 100usize;
    let mut records: Vec<FlowRecord> = Vec::new();
    let mut next_poll = Instant::now() + Duration::from_millis(200);
    // Spread over about 1.5 s so that the flows outlast the active timeout.
    let pause = Duration::from_micros(1_500_000 / per_flow.max(1));
    for seq in 0..per_flow {
        for s in &senders {
            s.send_to(&[seq as u8; 100][..payload], ("127.0.0.1", port))?;
        }
        std::thread::sleep(pause);
        if Instant::now() >= next_poll {
            records.extend(flows.poll()?);
            next_poll += Duration::from_millis(200);
        }
    }
    records.extend(flows.flush()?);
    let counters = flows.counters()?;
    let mine: Vec<&FlowRecord> = records
        .iter()
        .filter(|r| r.stats.key.dport() == port || r.stats.key.sport() == port)
        .collect();
    for r in &mine {
        let s = r.stats.oriented();
        println!(
            "{}  {} packets  {} bytes  {}",
            s.key,
            s.packets[0],
            s.bytes[0],
            r.end.name()
        );
    }
    let packets: u64 = mine.iter().map(|r| r.stats.total_packets()).sum();
    let bytes: u64 = mine.iter().map(|r| r.stats.total_bytes()).sum();
    let sent = per_flow * senders.len() as u64;
    // IP octets: 20 (IPv4) + 8 (UDP) + the payload.
    let sent_bytes = sent * (28 + payload as u64);
    println!(
        "sent {sent} datagrams ({sent_bytes} IP bytes) in {} flows; {} records of them: {packets} packets, {bytes} bytes",
        senders.len(),
        mine.len()
    );
    println!(
        "the program saw {} packets on lo: {} counted in flows, {} not a flow, {} without room",
        counters.packets(),
        counters.counted,
        counters.not_a_flow,
        counters.overflow
    );
    if (packets, bytes) != (sent, sent_bytes) {
        return Err(format!(
            "sent {sent} datagrams ({sent_bytes} bytes), the records hold {packets} ({bytes})"
        )
        .into());
    }
    Ok(())
}
