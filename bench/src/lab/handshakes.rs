//! Handshake-heavy traffic for the sniffers: many short TLS connections, each a whole TCP
//! conversation as a capture shows it (handshake, a post-quantum-sized ClientHello in two
//! segments, the ServerHello, a little application data, FIN both ways), to a foreign MAC so
//! that only promiscuous sniffers see it. Every connection is a new flow whose names are read,
//! the opposite of the long UDP flows of the other traffic.

use zcrx_flowcache::testdata::names::{modern_client_hello, records, server_hello};
use zcrx_flowcache::testdata::tcp4_segment;

/// The sniffers' traffic (`rxbench sniff --traffic`, `capacity --traffic`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// Long UDP flows.
    Udp,
    /// Many short TLS connections.
    TlsHandshakes,
}

const CLIENT: [u8; 4] = [198, 18, 0, 1];
const SERVER: [u8; 4] = [198, 18, 0, 2];
/// TCP's flags, as the segments carry them.
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
/// The most payload a segment carries (a 1500-byte MTU, IPv4 and TCP headers without options).
const MSS: usize = 1460;
/// X25519MLKEM768's key share: the ClientHello of current browsers is then about 1.9 KB.
const SHARE: usize = 1216;

/// The frames of `connections` TLS connections to port 443, one after the other, each with
/// a server name of its own; the source port and the address pair make each a new flow.
/// Replayed again, the same 5-tuples open new flows (the previous ones ended with FIN).
pub fn frames(connections: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(connections * 11);
    for i in 0..connections {
        let sport = 1024 + (i % 60_000) as u16;
        // Beyond 60 000 connections the client address changes too.
        let mut client = CLIENT;
        client[2] = (i / 60_000) as u8;
        let hello = records(
            &modern_client_hello(
                &format!("c{i}.handshakes.example.net"),
                &["h2", "http/1.1"],
                SHARE,
            ),
            16_384,
        );
        let mut reply = records(&server_hello(), 16_384);
        // Encrypted handshake and a ticket, as application data records.
        reply.extend(app_data(1200));
        let request = app_data(300);
        let (c, s) = (1_000u32, 7_000u32);
        let to_s = |seq: u32, ack: u32, flags: u8, p: &[u8]| {
            tcp4_segment(client, SERVER, sport, 443, seq, ack, flags, p)
        };
        let to_c = |seq: u32, ack: u32, flags: u8, p: &[u8]| {
            tcp4_segment(SERVER, client, 443, sport, seq, ack, flags, p)
        };
        out.push(to_s(c, 0, SYN, &[]));
        out.push(to_c(s, c + 1, SYN | ACK, &[]));
        out.push(to_s(c + 1, s + 1, ACK, &[]));
        let mut seq = c + 1;
        // In two segments, as a post-quantum ClientHello travels (reassembled before reading).
        for part in hello.chunks(hello.len().div_ceil(2).min(MSS)) {
            out.push(to_s(seq, s + 1, PSH | ACK, part));
            seq += part.len() as u32;
        }
        out.push(to_c(s + 1, seq, ACK, &[]));
        out.push(to_c(s + 1, seq, PSH | ACK, &reply));
        let s_end = s + 1 + reply.len() as u32;
        out.push(to_s(seq, s_end, PSH | ACK, &request));
        seq += request.len() as u32;
        out.push(to_s(seq, s_end, FIN | ACK, &[]));
        out.push(to_c(s_end, seq + 1, FIN | ACK, &[]));
        out.push(to_s(seq + 1, s_end + 1, ACK, &[]));
    }
    out
}

/// A TLS application-data record of `len` bytes (what a sniffer cannot read).
fn app_data(len: usize) -> Vec<u8> {
    let mut r = vec![23, 3, 3];
    r.extend((len as u16).to_be_bytes());
    r.resize(5 + len, 0xa5);
    r
}

/// The mean frame length of `frames`, bytes.
pub fn mean_len(frames: &[Vec<u8>]) -> usize {
    frames.iter().map(Vec::len).sum::<usize>() / frames.len().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zcrx_flowcache::names::FlowNames;
    use zcrx_flowcache::{extract, Direction, LinkType};

    #[test]
    fn every_connection_names_its_server_and_ends() {
        let f = frames(3);
        assert_eq!(f.len(), 3 * 11);
        assert!(f.iter().all(|x| x.len() <= 1514));
        // The ClientHello is in two segments.
        assert_eq!(f.iter().filter(|x| x.len() > 600).count(), 3 * 3);
        for (i, conn) in f.chunks(11).enumerate() {
            let mut names = FlowNames::new();
            let first = extract(LinkType::Ethernet, &conn[0], None).unwrap().key;
            for frame in conn {
                let x = extract(LinkType::Ethernet, frame, None).unwrap();
                let dir = if x.key == first {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
                let l4 = x.l4_offset as usize;
                let seq = u32::from_be_bytes(frame[l4 + 4..l4 + 8].try_into().unwrap());
                let flags = frame[l4 + 13];
                let payload = &frame[x.payload_offset as usize..];
                names.tcp(dir, seq, flags, payload, (x.key.sport(), x.key.dport()));
            }
            let hello = &names.names().client_hello.as_ref().unwrap().hello;
            let want = format!("c{i}.handshakes.example.net");
            assert_eq!(hello.server_name.as_deref(), Some(want.as_str()));
            assert_eq!(hello.alpn, ["h2", "http/1.1"]);
            assert!(names.names().server_hello.is_some());
        }
    }
}
