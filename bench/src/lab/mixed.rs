//! Mixed traffic for the printing sniffers (`rxbench sniff --print`): per flow, a short HTTP
//! conversation over TCP whose segments carry options (MSS, SACK permitted, timestamps,
//! window scale on the handshake; timestamps on the rest), a DNS query to port 53 and its
//! answer, and two plain UDP datagrams. Every frame is to a foreign MAC, so that only
//! promiscuous sniffers see it, with valid IPv4, TCP and UDP checksums (`tcpdump -v` finds
//! nothing wrong with them).

const CLIENT: [u8; 4] = [198, 18, 0, 1];
const SERVER: [u8; 4] = [198, 18, 0, 2];
/// Not the receiving veth's: the receiving stack drops the frames, the sniffers see them.
const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
/// A UDP port no printer decodes (tcpdump prints `UDP, length N`).
const PLAIN_PORT: u16 = 40_000;

/// The frames of one exchange per flow for `flows` flows, one flow after the other: 10 TCP
/// segments, 2 DNS messages and 2 plain UDP datagrams each.
pub fn frames(flows: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(flows * 14);
    for i in 0..flows {
        let sport = 20_000 + (i % 40_000) as u16;
        http(&mut out, sport, i);
        let name = format!("w{i}.example.net");
        let id = i as u16;
        out.push(udp(CLIENT, SERVER, sport, 53, &dns(id, &name, None)));
        out.push(udp(
            SERVER,
            CLIENT,
            53,
            sport,
            &dns(id, &name, Some(i as u32)),
        ));
        out.push(udp(CLIENT, SERVER, sport, PLAIN_PORT, &[0x5a; 100]));
        out.push(udp(SERVER, CLIENT, PLAIN_PORT, sport, &[0xa5; 300]));
    }
    out
}

/// A TCP conversation to port 80: handshake with options, a GET, its answer, FIN both ways.
fn http(out: &mut Vec<Vec<u8>>, sport: u16, i: usize) {
    let (c, s) = (1_000u32 + i as u32, 50_000u32);
    let ts = 100_000 + i as u32;
    let syn_opts = |val: u32, ecr: u32| {
        let mut o = vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10];
        o.extend(val.to_be_bytes());
        o.extend(ecr.to_be_bytes());
        o.extend([1, 3, 3, 7]);
        o
    };
    let ts_opts = |val: u32, ecr: u32| {
        let mut o = vec![1, 1, 8, 10];
        o.extend(val.to_be_bytes());
        o.extend(ecr.to_be_bytes());
        o
    };
    let get = format!("GET /item/{i} HTTP/1.1\r\nHost: w{i}.example.net\r\nAccept: */*\r\n\r\n");
    let mut reply =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 400\r\n\r\n".to_vec();
    reply.resize(reply.len() + 400, b'x');
    let to_s = |seq, ack, flags, o: &[u8], p: &[u8]| {
        tcp(CLIENT, SERVER, (sport, 80), (seq, ack), flags, o, p)
    };
    let to_c = |seq, ack, flags, o: &[u8], p: &[u8]| {
        tcp(SERVER, CLIENT, (80, sport), (seq, ack), flags, o, p)
    };
    out.push(to_s(c, 0, SYN, &syn_opts(ts, 0), &[]));
    out.push(to_c(s, c + 1, SYN | ACK, &syn_opts(ts + 7, ts), &[]));
    out.push(to_s(c + 1, s + 1, ACK, &ts_opts(ts + 1, ts + 7), &[]));
    out.push(to_s(
        c + 1,
        s + 1,
        PSH | ACK,
        &ts_opts(ts + 1, ts + 7),
        get.as_bytes(),
    ));
    let c_end = c + 1 + get.len() as u32;
    out.push(to_c(s + 1, c_end, ACK, &ts_opts(ts + 8, ts + 1), &[]));
    out.push(to_c(
        s + 1,
        c_end,
        PSH | ACK,
        &ts_opts(ts + 8, ts + 1),
        &reply,
    ));
    let s_end = s + 1 + reply.len() as u32;
    out.push(to_s(c_end, s_end, ACK, &ts_opts(ts + 2, ts + 8), &[]));
    out.push(to_s(c_end, s_end, FIN | ACK, &ts_opts(ts + 2, ts + 8), &[]));
    out.push(to_c(
        s_end,
        c_end + 1,
        FIN | ACK,
        &ts_opts(ts + 9, ts + 2),
        &[],
    ));
    out.push(to_s(
        c_end + 1,
        s_end + 1,
        ACK,
        &ts_opts(ts + 3, ts + 9),
        &[],
    ));
}

/// A DNS query for `name`'s A record (recursion desired), or with `answer` its response.
fn dns(id: u16, name: &str, answer: Option<u32>) -> Vec<u8> {
    let flags: u16 = if answer.is_some() { 0x8180 } else { 0x0100 };
    let mut m = id.to_be_bytes().to_vec();
    m.extend(flags.to_be_bytes());
    m.extend([0, 1, 0, u8::from(answer.is_some()), 0, 0, 0, 0]);
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend(label.as_bytes());
    }
    m.extend([0, 0, 1, 0, 1]);
    if let Some(a) = answer {
        // A pointer to the question's name, A, IN, a TTL of 300 s, the address.
        m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4]);
        m.extend((u32::from_be_bytes([198, 18, 128, 0]) + a % 32_768).to_be_bytes());
    }
    m
}

/// Ethernet / IPv4 / TCP with `options` (a multiple of 4 bytes) and `payload`.
fn tcp(
    src: [u8; 4],
    dst: [u8; 4],
    (sport, dport): (u16, u16),
    (seq, ack): (u32, u32),
    flags: u8,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let mut l4 = Vec::with_capacity(20 + options.len() + payload.len());
    l4.extend(sport.to_be_bytes());
    l4.extend(dport.to_be_bytes());
    l4.extend(seq.to_be_bytes());
    l4.extend(ack.to_be_bytes());
    l4.extend([
        (((20 + options.len()) / 4) << 4) as u8,
        flags,
        0xfa,
        0xf0,
        0,
        0,
        0,
        0,
    ]);
    l4.extend(options);
    l4.extend(payload);
    ipv4(src, dst, 6, l4, 16)
}

/// Ethernet / IPv4 / UDP carrying `payload`.
fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut l4 = Vec::with_capacity(8 + payload.len());
    l4.extend(sport.to_be_bytes());
    l4.extend(dport.to_be_bytes());
    l4.extend((8 + payload.len() as u16).to_be_bytes());
    l4.extend([0, 0]);
    l4.extend(payload);
    ipv4(src, dst, 17, l4, 6)
}

/// The frame around transport segment `l4` (its checksum, at `sum_at`, filled in).
fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, mut l4: Vec<u8>, sum_at: usize) -> Vec<u8> {
    let mut pseudo = Vec::with_capacity(12 + l4.len());
    pseudo.extend(src);
    pseudo.extend(dst);
    pseudo.extend([0, proto]);
    pseudo.extend((l4.len() as u16).to_be_bytes());
    pseudo.extend(&l4);
    let sum = checksum(&pseudo);
    // UDP sends a computed 0 as all ones (RFC 768).
    let sum = if sum == 0 && proto == 17 { 0xffff } else { sum };
    l4[sum_at..sum_at + 2].copy_from_slice(&sum.to_be_bytes());
    let mut ip = vec![0x45, 0];
    ip.extend((20 + l4.len() as u16).to_be_bytes());
    ip.extend([0, 1, 0x40, 0, 64, proto, 0, 0]);
    ip.extend(src);
    ip.extend(dst);
    let sum = checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let mut f = DST_MAC.to_vec();
    f.extend(SRC_MAC);
    f.extend([0x08, 0x00]);
    f.extend(ip);
    f.extend(l4);
    f
}

/// The Internet checksum (RFC 1071) of `data`.
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zcrx_flowcache::{extract, LinkType};

    #[test]
    fn every_frame_is_ipv4_with_valid_checksums() {
        let f = frames(3);
        assert_eq!(f.len(), 3 * 14);
        for frame in &f {
            assert!(frame.len() <= 1514);
            assert_eq!(frame[..6], DST_MAC);
            assert_eq!(checksum(&frame[14..34]), 0, "IPv4 header");
            let x = extract(LinkType::Ethernet, frame, None).expect("a flow key");
            let l4 = &frame[x.l4_offset as usize..];
            let mut pseudo = frame[26..34].to_vec();
            pseudo.extend([0, frame[23]]);
            pseudo.extend((l4.len() as u16).to_be_bytes());
            pseudo.extend(l4);
            assert_eq!(checksum(&pseudo), 0, "transport checksum");
        }
    }

    #[test]
    fn the_mix_has_tcp_options_dns_on_port_53_and_plain_udp() {
        let f = frames(1);
        let tcp: Vec<&Vec<u8>> = f.iter().filter(|x| x[23] == 6).collect();
        assert_eq!(tcp.len(), 10);
        // The SYN: a 40-byte header (20 of options) beginning with MSS 1460.
        assert_eq!(tcp[0][46] >> 4, 10);
        assert_eq!(tcp[0][54..58], [2, 4, 0x05, 0xb4]);
        assert!(tcp[3].windows(4).any(|w| w == b"GET "));
        let dns: Vec<&Vec<u8>> = f
            .iter()
            .filter(|x| x[23] == 17 && (x[36..38] == [0, 53] || x[34..36] == [0, 53]))
            .collect();
        assert_eq!(dns.len(), 2);
        // The question's name, as labels.
        assert!(dns[0].windows(4).any(|w| w == b"\x07exa"));
        assert_eq!(f.iter().filter(|x| x[23] == 17).count(), 4);
    }
}
