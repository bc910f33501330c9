//! Small frame builders for examples, tests and benchmarks of code that embeds the flow
//! cache. Not a packet crafting library: only what demonstrations need.

/// The messages the names readers read (with the `names` feature).
#[cfg(feature = "names")]
pub mod names;

/// An Ethernet / IPv4 / UDP frame with `payload` zero bytes and a valid IPv4 checksum.
pub fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: usize) -> Vec<u8> {
    let mut f = eth_ipv4(src, dst, 17, (20 + 8 + payload) as u16);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&(8 + payload as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(f.len() + payload, 0);
    f
}

/// An Ethernet / IPv6 / (hop-by-hop, destination options) / TCP frame.
pub fn tcp6_with_ext(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16, flags: u8) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd];
    let payload_len: u16 = 8 + 8 + 20;
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&payload_len.to_be_bytes());
    f.extend_from_slice(&[0, 64]); // next: hop-by-hop
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&[60, 0, 1, 4, 0, 0, 0, 0]); // HBH -> dest opts, PadN
    f.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]); // dest opts -> TCP, PadN
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f
}

/// Inserts an 802.1Q tag (TPID 0x8100) after the MAC addresses of an Ethernet frame.
pub fn with_vlan(frame: &[u8], tci: u16) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&[0x81, 0x00]);
    f.extend_from_slice(&tci.to_be_bytes());
    f.extend_from_slice(&frame[12..]);
    f
}

/// An Ethernet / IPv4 / TCP frame as a host captures a BIG TCP (GSO) send since Linux 6.3:
/// `payload` bytes after the TCP header, IPv4 total length 0 because the datagram is longer
/// than 65 535 bytes (tcpdump then takes the length from the frame).
pub fn tcp4_big(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: usize) -> Vec<u8> {
    let mut f = eth_ipv4(src, dst, 6, 0);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(f.len() + payload, 0);
    f
}

/// An Ethernet / IPv4 / TCP segment: sequence and acknowledgment numbers, `flags` (FIN 0x01,
/// SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10), a 64 KiB window and `payload`; the IPv4 checksum
/// valid, the TCP checksum left 0 (as an offloading sender's capture shows it).
#[allow(clippy::too_many_arguments)]
pub fn tcp4_segment(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = eth_ipv4(src, dst, 6, (20 + 20 + payload.len()) as u16);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ack.to_be_bytes());
    f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend_from_slice(payload);
    f
}

/// An Ethernet / IPv6 jumbogram (RFC 2675): payload length 0 and a hop-by-hop Jumbo Payload
/// option carrying the real length, then TCP with `payload` bytes.
pub fn tcp6_jumbo(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16, payload: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd];
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 0, 0, 64]); // payload length 0, next: hop-by-hop
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    let jumbo = (8 + 20 + payload) as u32;
    f.extend_from_slice(&[6, 0, 0xc2, 4]); // HBH -> TCP, Jumbo Payload option (RFC 2675 §2)
    f.extend_from_slice(&jumbo.to_be_bytes());
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(f.len() + payload, 0);
    f
}

/// Ethernet header and a 20-byte IPv4 header (DF, TTL 64, valid checksum) for `proto`, with
/// total length `total_len`.
fn eth_ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, total_len: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&total_len.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    let sum = checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f
}

fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = b
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// One packet of `key`'s flow (a canonical key in symmetric mode, `dir` the packet's
/// direction in it) accounted to its counters in a general map's entry (`or_default`):
/// the accounting [`crate::FlowTable::track`] does to its slot — packets, bytes and TCP flags
/// per direction, the first packet's time and direction, the latest time seen — so that a
/// benchmark comparing the table with a general hash map times the same work. One
/// difference: a new entry is told here by its zero counters (two loads and an OR), where the
/// table's slot marks a flow with no packet since its report in its first time (a compare).
#[inline(always)]
pub fn account_as_the_table(
    s: &mut crate::FlowStats,
    key: crate::FlowKey,
    dir: crate::Direction,
    len: u32,
    ts_ns: u64,
    tcp_flags: u8,
) {
    if s.packets == [0, 0] {
        s.key = key;
        s.first_ns = ts_ns;
        s.initiator = dir;
    }
    let d = dir as usize;
    s.packets[d] += 1;
    s.bytes[d] += u64::from(len);
    s.tcp_flags[d] |= tcp_flags;
    s.last_ns = s.last_ns.max(ts_ns);
}

/// A lighter accounting than the table's, for a benchmark baseline: packets and bytes per
/// direction, the first time, the last time stored (not the latest: no comparison), no TCP
/// flags. Beside [`account_as_the_table`] it shows what the table's extra work costs.
#[inline(always)]
pub fn account_counts_only(
    s: &mut crate::FlowStats,
    key: crate::FlowKey,
    dir: crate::Direction,
    len: u32,
    ts_ns: u64,
) {
    if s.packets == [0, 0] {
        s.key = key;
        s.first_ns = ts_ns;
    }
    let d = dir as usize;
    s.packets[d] += 1;
    s.bytes[d] += u64::from(len);
    s.last_ns = ts_ns;
}

/// The 64-byte UDP/IPv4 frames of the benchmarks' synthetic traffic, one per flow (addresses
/// and source port derived from the flow's index).
pub fn bench_flows(flows: usize) -> Vec<Vec<u8>> {
    (0..flows as u32)
        .map(|i| {
            udp4(
                [198, 18, (i >> 8) as u8, i as u8],
                [198, 19, (i >> 24) as u8, (i >> 16) as u8],
                1024 + (i % 60_000) as u16,
                53,
                18,
            )
        })
        .collect()
}

/// `n` flow indices below `flows` in the benchmarks' fixed pseudo-random order (xorshift):
/// table accesses at random, the same in every run.
pub fn xorshift_order(flows: usize, n: usize) -> Vec<u32> {
    let mut x = 0x2545_f491u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % flows as u32
        })
        .collect()
}

/// Panics unless `table` holds exactly the flows of `expected` (a map's entries, as
/// [`account_as_the_table`] filled them) with the same counters, the `closed` flag aside
/// (the map does not keep it): the check a benchmark makes before timing the two.
pub fn assert_same_flows<'a>(
    table: &crate::FlowTable,
    expected: impl ExactSizeIterator<Item = (&'a crate::FlowKey, &'a crate::FlowStats)>,
) {
    assert_eq!(table.len(), expected.len());
    for (k, s) in expected {
        let st = table
            .lookup(k)
            .expect("every flow of the map is in the table")
            .1;
        assert_eq!(
            crate::FlowStats {
                closed: false,
                ..st
            },
            *s
        );
    }
}
