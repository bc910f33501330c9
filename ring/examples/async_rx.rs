//! The receive ring in a tokio program: one task sends UDP datagrams over loopback, another
//! reads them from the ring as a `Stream` of owned batches, and a third shows the zero-copy
//! path (a block lent by `next_block().await`). Exits 0 once every datagram was seen.
//!
//! ```text
//! async_rx [COUNT]    send COUNT datagrams (default 1000) to 127.0.0.1; needs CAP_NET_RAW
//! ```

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use zcrx_ring::{AsyncRxRing, RingError, RxRing};

/// The UDP destination port of a loopback frame (its Ethernet header is zeros).
fn udp_dport(frame: &[u8]) -> Option<u16> {
    if frame.len() < 42 || frame[12..14] != [0x08, 0x00] || frame[23] != 17 {
        return None;
    }
    let ihl = usize::from(frame[14] & 0x0f) * 4;
    let udp = frame.get(14 + ihl..14 + ihl + 4)?;
    Some(u16::from_be_bytes([udp[2], udp[3]]))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|e| format!("COUNT {n:?}: {e}"))?,
        None => 1000,
    };
    // Loopback shows each packet twice (outgoing and incoming): keep the incoming copy.
    let ring = RxRing::builder("lo")
        .ignore_outgoing(true)
        .block_size(1 << 16)
        .block_count(64)
        .block_timeout(Duration::from_millis(5))
        .build()?;
    let ring = Arc::new(AsyncRxRing::new(ring)?);

    let rx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
    let port = rx.local_addr()?.port();
    let tx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;

    // The zero-copy path: one block, borrowed from the ring while it is read.
    let first = {
        tx.send_to(b"first", ("127.0.0.1", port)).await?;
        let block = tokio::time::timeout(Duration::from_secs(2), ring.next_block())
            .await
            .map_err(|_| "no block within 2 s")??;
        let mut n = 0;
        for p in block.packets() {
            n += usize::from(udp_dport(p?.data()) == Some(port));
        }
        n
    }; // the block goes back to the kernel here
    println!("zero-copy: the first block held {first} of our datagrams");

    // The owned path, on another task: batches are `Send + 'static`.
    let reader = tokio::spawn({
        let batches = ring.clone().batches();
        async move {
            let mut seen = 0;
            let mut batches =
                std::pin::pin!(batches.take_until(tokio::time::sleep(Duration::from_secs(10))));
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                seen += batch
                    .packets
                    .iter()
                    .filter(|p| udp_dport(&p.data) == Some(port))
                    .count();
                if seen >= count {
                    break;
                }
            }
            Ok::<usize, RingError>(seen)
        }
    });
    let mut buf = [0u8; 16];
    for i in 0..count {
        tx.send_to(&(i as u32).to_be_bytes(), ("127.0.0.1", port))
            .await?;
        rx.recv(&mut buf).await?;
    }
    let seen = reader.await??;
    let stats = ring.stats()?;
    println!(
        "owned batches: {seen} of {count} datagrams; ring: {} packets, {} dropped",
        stats.packets, stats.drops
    );
    if seen != count {
        return Err(format!("saw {seen} of {count} datagrams").into());
    }
    Ok(())
}
